import type { StreamDependencies } from '../core/stream/delivery-plan';
import type { StreamIncident } from '../core/stream/delivery-stream.port';
import { formatLsn } from '../core/stream/stream-message';
import type { WalWrite } from '../core/stream/wal-options';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { StreamOwnedRows } from '../sql/dialects/stream-owned-rows.sql';
import { whileServerRestarts } from '../sql/server-restart';
import { WalPositionTable } from './wal-position.table';
import { prepareWalSlot, walSetupLock, walSlotState, type WalNames, type WalQuery, type WalSlotLag, type WalSlotMade } from './wal-slot.setup';
import { WalSlotWatch } from './wal-slot.watch';
import { walSlotMadeAnew } from './wal.messages';

// How PostgreSQL refuses a slot that is gone or can stream nothing again (PostgreSQL 15's texts).
const SLOT_GONE = /replication slot "[^"]*" does not exist|can no longer get changes from replication slot|has been invalidated/i;

/** What the keeper needs of the stream's configuration. */
export interface WalSlotKeeperConfig extends Pick<StreamDependencies, 'connection' | 'table' | 'logger' | 'lagReadingMs'> {
  slot: WalNames;
  write: WalWrite;
}

/**
 * One outbox's replication slot, kept: made at start (with the publication and the position
 * table) and made anew when the stream finds it dropped or invalidated; a slot made over a former
 * one is an incident (logged with both positions, counted, kept for health), and the rows the
 * former slot never decoded go to the table relay. With `wal.write: 'message'` it also watches the
 * slot, so that saves write rows while no slot would decode their messages (WalSlotWatch). Its
 * readings (lag, incidents) feed the stream's health, stats and gauges.
 */
export class WalSlotKeeper {
  /** Slots made anew over a former one, by whether their events were kept (rows) or may be lost (messages): the incidents counter. */
  readonly incidents = { eventsKept: 0, eventsMayBeLost: 0 };
  private lastIncident: StreamIncident | undefined;
  private watch: WalSlotWatch | undefined;
  private lagReading: { at: number; reading: Promise<WalSlotLag | undefined> } | undefined;
  private readonly query: WalQuery = async (sql, params) => (await this.config.connection.run({ sql, params: params ?? [] })).records;

  constructor(private readonly config: WalSlotKeeperConfig) {}

  /** Whether a stream's end means its slot is gone (dropped, invalidated, missing on a promoted standby): then it is made anew, not asked for forever. */
  static isGone(endText: string): boolean {
    return SLOT_GONE.test(endText);
  }

  /** With `wal.write: 'message'`: whether this database's slot decodes a message written now (see WalSlotWatch). */
  get slotUsable(): boolean {
    return this.watch?.slotUsable ?? true;
  }

  /** The last time this instance made the slot anew over a former one (see StreamIncident). */
  get incident(): StreamIncident | undefined {
    return this.lastIncident;
  }

  /**
   * The slot's lag (WAL retained, confirmation delay, whether an instance streams it), read at most
   * once per `lagReadingMs` whoever asks (health, metrics, stats).
   */
  lag(): Promise<WalSlotLag | undefined> {
    const now = Date.now();
    if (!this.lagReading || now - this.lagReading.at >= this.config.lagReadingMs) {
      const reading = walSlotState(this.query, this.config.slot.slotName);
      // A failed reading is not kept: the next caller tries again.
      reading.catch(() => this.lagReading?.reading === reading && (this.lagReading = undefined));
      this.lagReading = { at: now, reading };
    }
    return this.lagReading.reading;
  }

  /** The set-up at start: a write-only instance (`streams` false) checks, and makes the slot only where its writes need one. */
  async prepare(streams: boolean): Promise<void> {
    // Every step checks before it creates, so a set-up cut by a restart is simply run again.
    this.report(await whileServerRestarts('setting up the WAL slot', () => this.setUp(streams), { logger: this.config.logger }));
  }

  /** Makes the slot anew for the instance that holds the stream lock (its stream found it gone). */
  async remake(): Promise<void> {
    this.report(await this.setUp(true));
  }

  /** With `wal.write: 'message'`, starts watching the slot (see WalSlotWatch). */
  startWatch(): void {
    if (this.config.write !== 'message' || this.watch) return;
    this.watch = new WalSlotWatch(this.config.slot.slotName, () => walSlotState(this.query, this.config.slot.slotName), this.config.logger);
    this.watch.start();
  }

  stopWatch(): void {
    this.watch?.stop();
  }

  private setUp(streams: boolean): Promise<WalSlotMade | undefined> {
    const { slot, table, write } = this.config;
    const outbox = OutboxTable.on('postgres', table);
    return prepareWalSlot(this.query, slot, {
      streams,
      write,
      tables: [outbox.quoted(), outbox.paused.quoted()],
      positions: {
        create: [...WalPositionTable.createStatements(table), StreamOwnedRows.relayIndexDdl(table)],
        read: WalPositionTable.readStatement(table),
        forget: WalPositionTable.forgetStatement(table),
      },
      // Also with 'message': rows an instance writing 'row' left (a rolling change of wal.write).
      releaseRows: new StreamOwnedRows(table).releaseAll(),
      serialized: (work) => this.serialized(work),
    });
  }

  /** The set-up's catalog changes in one transaction holding the set-up lock: instances that start together take turns. */
  private serialized<T>(work: (query: WalQuery) => Promise<T>): Promise<T> {
    return this.config.connection.transaction(async (run) => {
      const query: WalQuery = async (sql, params) => (await run({ sql, params: params ?? [] })).records;
      await query(walSetupLock);
      return work(query);
    });
  }

  /**
   * A slot made over a former one is an incident: said once with both positions and counted. With
   * rows (`wal.write: 'row'`) nothing was lost, the rows it never decoded went to the table relay.
   */
  private report(made: WalSlotMade | undefined): void {
    const { slot, write, logger } = this.config;
    if (!made || made.reason === 'first') {
      if (made && made.releasedRows > 0) logger.log(`WAL relay: made the replication slot "${slot.slotName}"; ${made.releasedRows} row(s) written before it go to the table relay.`);
      return;
    }
    const eventsMayBeLost = write === 'message';
    const formerPosition = made.formerPosition === undefined ? undefined : formatLsn(made.formerPosition);
    const startsAt = formatLsn(made.startsAt);
    this.lastIncident = { reason: made.reason, formerPosition, startsAt, keptRows: made.releasedRows, eventsMayBeLost, at: new Date() };
    if (eventsMayBeLost) this.incidents.eventsMayBeLost++;
    else this.incidents.eventsKept++;
    const text = walSlotMadeAnew(slot.slotName, made.reason, formerPosition, startsAt, made.releasedRows, eventsMayBeLost);
    if (eventsMayBeLost) logger.error(text);
    else logger.warn(text);
  }
}
