import type { WalSlotLag } from './wal-slot.setup';

/** How often a writer of WAL messages looks at its slot: a save learns within this (and one query) that no slot decodes it. */
export const SLOT_WATCH_MS = 500;

/**
 * With `wal.write: 'message'`, a committed event lives only in the WAL that this database's slot
 * decodes: written while the slot is missing (dropped, not yet made on a promoted standby) or
 * invalidated, it would be decoded by no one. The watch reads the slot every SLOT_WATCH_MS, and
 * while it is not usable the writer writes rows the stream owns instead (`wal.write: 'row'`'s write),
 * which the next slot made hands to the table relay. A reading that fails changes nothing.
 */
export class WalSlotWatch {
  private timer: NodeJS.Timeout | undefined;
  private usable = true;

  constructor(
    private readonly slotName: string,
    private readonly read: () => Promise<WalSlotLag | undefined>,
    private readonly logger: { warn(message: string): void; log(message: string): void },
  ) {}

  /** Whether a WAL message written now is decoded by this database's slot, as last read. */
  get slotUsable(): boolean {
    return this.usable;
  }

  start(): void {
    this.timer = setInterval(() => void this.look(), SLOT_WATCH_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async look(): Promise<void> {
    let state: WalSlotLag | undefined;
    try {
      state = await this.read();
    } catch {
      // The server away: saves fail too, so nothing is written to nowhere meanwhile.
      return;
    }
    const usable = state !== undefined && !state.invalidated && state.foreignDatabase === undefined;
    if (usable === this.usable) return;
    this.usable = usable;
    if (!usable) {
      const why = !state ? 'does not exist in this database' : state.invalidated ? 'was invalidated by the server' : `belongs to the database "${state.foreignDatabase}"`;
      this.logger.warn(`WAL relay: the replication slot "${this.slotName}" ${why}: saves write their events as rows (which a new slot hands to the table relay) until it is back.`);
    } else {
      this.logger.log(`WAL relay: the replication slot "${this.slotName}" is back: saves write WAL messages again.`);
    }
  }
}
