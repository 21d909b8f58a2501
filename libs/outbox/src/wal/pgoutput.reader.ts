import { errorText } from '../core/error-text';
import { formatLsn, parseLsn, type StreamCommit, type StreamMessage } from '../core/stream/stream-message';
import { walUndecodableMessage } from './wal.messages';
import { decodeWalRecord } from '../core/stream/wal-record';
import type { WalNames } from './wal-slot.setup';
import { loadPgLogicalReplication, type ReplicationConnectionConfig } from './pg-logical-replication.loader';
import { isStreamOwned, streamMessageOfRow, type DecodedOutboxRow } from './stream-owned-row.decoder';
import type { WalReader } from './wal-reader.port';

// How long no data may be handled after a keepalive before its position counts as caught up.
const CAUGHT_UP_QUIET_MS = 200;

export interface PgoutputReaderConfig extends WalNames {
  connection: ReplicationConnectionConfig;
  /** Only logical messages with this prefix are the outbox's (`wal.write: 'message'`); rows the stream owns are its too. */
  prefix: string;
  /**
   * The paused-destinations table's name (`<table>_paused`): the publication carries its inserts
   * and updates beside the outbox table's, and a row of it pauses its destination from that commit on.
   */
  pausedTable?: string;
  /** Each commit with its outbox messages, in commit order; the reader waits for the returned promise. */
  onCommit(commit: StreamCommit): Promise<void>;
  /** The server has sent everything up to this position; resolves true once that is confirmed (false: not yet, try again). */
  onCaughtUp(lsn: bigint): Promise<boolean>;
  /** The stream ended (connection lost, slot taken, bad record): the owner decides when to read again. */
  onEnd(error: Error): void;
}

/**
 * Reads the slot with pgoutput (`messages: true`) through `pg-logical-replication`, one
 * replication connection, and turns its begin/message/commit sequence into commits. Confirms only
 * when told to: acknowledging is manual and the library's own periodic acknowledgement is off,
 * since it would confirm what the broker has not acknowledged.
 */
export class PgoutputReader implements WalReader {
  private service: { acknowledge(lsn: string, ping?: boolean): Promise<boolean>; destroy(): Promise<unknown> } | undefined;
  private current: StreamMessage[] = [];
  private wroteTable = false;
  private updatedRows = false;
  private paused: string[] = [];
  private xid: number | undefined;
  private ended = false;
  private confirmed: bigint | undefined;
  // Data messages handed to onData so far, and those being handled now (see onHeartbeat).
  private dataSeen = 0;
  private dataInProgress = 0;
  private caughtUpTimer: NodeJS.Timeout | undefined;
  private keepaliveLsn: bigint | undefined;

  constructor(private readonly config: PgoutputReaderConfig) {}

  /**
   * `from`: the position saved when the stream last confirmed published messages (see
   * StreamPositionStore). The server starts at the later of it and the slot's own confirmed
   * position, skipping every commit before it, which the slot alone may have forgotten after a
   * server restart.
   */
  async start(from?: bigint): Promise<void> {
    const { LogicalReplicationService, PgoutputPlugin } = loadPgLogicalReplication();
    const service = new LogicalReplicationService(this.config.connection, { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: true } });
    this.service = service;
    service.on('data', (lsn: string, message: PgoutputMessage) => this.onData(lsn, message));
    service.on('heartbeat', (lsn: string, _at: number, shouldRespond: boolean) => this.onHeartbeat(parseLsn(lsn), shouldRespond));
    service.on('error', (error: Error) => this.end(error));
    const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: [this.config.publicationName], messages: true });
    // Resolves or rejects when the replication connection ends, which may be much later.
    const subscribed = from === undefined ? service.subscribe(plugin, this.config.slotName) : service.subscribe(plugin, this.config.slotName, formatLsn(from));
    subscribed.then(
      () => this.end(new Error('the replication connection closed')),
      (error: unknown) => this.end(error),
    );
  }

  /** Tells the server everything up to this commit end is done. */
  async confirm(lsn: bigint): Promise<void> {
    // The library sends the position it is given plus one; the server skips, on a restart, every
    // transaction whose commit record starts before the confirmed position, so confirm exactly
    // the commit's end and never a byte past it (the next commit may start right there).
    await this.service?.acknowledge(formatLsn(lsn - 1n));
    this.confirmed = lsn;
  }

  /**
   * A keepalive carries the server's WAL end. The library hands it over at once, while data it read
   * before it may still wait in its queue; confirming that position then could skip those commits
   * after a crash. So the newest keepalive's position is passed on only once no data was handled
   * for a quiet period (anything queued before it is handled within microseconds), and the relay
   * takes it only when all it received is acknowledged; until then it is tried again after each
   * quiet period, since an idle server may send no other keepalive for a long time. A reply the
   * server asks for repeats the last confirmed position.
   */
  private onHeartbeat(lsn: bigint, shouldRespond: boolean): void {
    if (this.ended) return;
    if (shouldRespond && this.confirmed !== undefined) void this.service?.acknowledge(formatLsn(this.confirmed - 1n)).catch(() => undefined);
    if (this.keepaliveLsn === undefined || lsn > this.keepaliveLsn) this.keepaliveLsn = lsn;
    this.armCaughtUp();
  }

  private armCaughtUp(): void {
    if (this.ended || this.caughtUpTimer || this.keepaliveLsn === undefined) return;
    const seen = this.dataSeen;
    this.caughtUpTimer = setTimeout(() => {
      void this.tryCaughtUp(seen).then(
        () => {
          this.caughtUpTimer = undefined;
          this.armCaughtUp();
        },
        (error: unknown) => this.end(error),
      );
    }, CAUGHT_UP_QUIET_MS);
  }

  private async tryCaughtUp(seen: number): Promise<void> {
    const lsn = this.keepaliveLsn;
    if (this.ended || lsn === undefined || this.dataSeen !== seen || this.dataInProgress > 0) return;
    // Done when the relay took it, or a commit's confirmation has passed it meanwhile.
    if ((await this.config.onCaughtUp(lsn)) || (this.confirmed !== undefined && this.confirmed >= lsn)) {
      if (this.keepaliveLsn === lsn) this.keepaliveLsn = undefined;
    }
  }

  async stop(): Promise<void> {
    this.ended = true;
    clearTimeout(this.caughtUpTimer);
    const service = this.service;
    this.service = undefined;
    await service?.destroy();
  }

  private async onData(lsn: string, message: PgoutputMessage): Promise<void> {
    if (this.ended) return;
    this.dataSeen++;
    this.dataInProgress++;
    try {
      if (message.tag === 'begin') (this.current = []), (this.wroteTable = false), (this.updatedRows = false), (this.paused = []), (this.xid = message.xid);
      // A pause: the publication's other table.
      else if ((message.tag === 'insert' || message.tag === 'update') && message.relation?.name === this.config.pausedTable) this.paused.push(String(message.new?.destination));
      // A row the stream owns (wal.write 'row'): a message to publish, which holds nothing.
      else if (message.tag === 'insert' && isStreamOwned(message.new)) this.current.push(streamMessageOfRow(message.new, this.current.length, this.xid ?? 0));
      // Otherwise the outbox table (inserts and updates): a row that may hold an aggregate. A row the
      // stream let go (an update of a stream-owned row) holds its aggregate from then on, as any.
      else if ((message.tag === 'insert' || message.tag === 'update') && message.new?.status !== 'published') {
        this.wroteTable = true;
        if (message.tag === 'update') this.updatedRows = true;
      }
      else if (message.tag === 'message' && message.transactional && message.prefix === this.config.prefix) this.decode(lsn, message);
      else if (message.tag === 'commit') {
        const messages = this.current;
        this.current = [];
        const commit = parseLsn(message.commitEndLsn ?? lsn);
        messages.forEach((m) => (m.commit = commit));
        const paused = this.paused.length > 0 ? this.paused : undefined;
        await this.config.onCommit({ lsn: commit, messages, wroteTable: this.wroteTable, xid: this.xid, updatedRows: this.updatedRows, paused });
      }
    } catch (error) {
      this.end(error);
    } finally {
      this.dataInProgress--;
    }
  }

  private decode(lsn: string, message: { prefix: string; content: Uint8Array }): void {
    try {
      for (const decoded of decodeWalRecord(Buffer.from(message.content).toString('utf8'), this.current.length)) this.current.push(decoded);
    } catch (error) {
      throw new Error(walUndecodableMessage(message.prefix, lsn, errorText(error)));
    }
  }

  private end(error: unknown): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.caughtUpTimer);
    void this.service?.destroy().catch(() => undefined);
    this.service = undefined;
    this.config.onEnd(error instanceof Error ? error : new Error(String(error)));
  }
}

type PgoutputMessage =
  | { tag: 'begin'; xid: number }
  | { tag: 'message'; transactional: boolean; prefix: string; content: Uint8Array }
  | { tag: 'commit'; commitEndLsn: string | null }
  | { tag: 'insert' | 'update'; relation?: { name: string }; new?: (DecodedOutboxRow & { status?: unknown; destination?: unknown }) | null }
  // relation, type, …
  | { tag: 'other' };
