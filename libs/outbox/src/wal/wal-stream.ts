import type * as PromClient from 'prom-client';
import { errorText } from '../core/error-text';
import type { OutboxTransport } from '../core/outbox-transport.port';
import { loadOptional } from '../core/optional-peer';
import { RetryPolicy } from '../core/retry-policy';
import type { StreamDependencies } from '../core/stream/delivery-plan';
import type { DeliveryStream, StopSteps, StreamHealth, StreamHealthThresholds, StreamIncident, StreamSource } from '../core/stream/delivery-stream.port';
import type { WalReaderThread, WalWrite } from '../core/stream/wal-options';
import { StreamOwnedRows } from '../sql/dialects/stream-owned-rows.sql';
import { StreamRowSettlement } from './stream-row.settlement';
import { RememberedPosition } from '../core/stream/remembered-position';
import { StreamRelay } from '../core/stream/stream-relay';
import { walTableUnreachable } from './wal.messages';
import { WAL_DEFAULTS } from '../core/stream/wal-options';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { notificationChannel } from '../sql/postgres-notification.listener';
import { loadPgLogicalReplication } from './pg-logical-replication.loader';
import { checkReaderThreadConnection, checkReaderThreadEntry } from './reader-thread/threaded-wal.reader';
import { createWalReader } from './wal-reader';
import type { WalReader } from './wal-reader.port';
import type { PgoutputReaderConfig } from './pgoutput.reader';
import { replicationConnection } from './replication-connection';
import { TableOverflow } from './table-overflow';
import type { WalNames, WalSlotLag } from './wal-slot.setup';
import { WalSlotKeeper } from './wal-slot.keeper';
import { registerWalSlotMetrics } from './wal-slot.metrics';
import { judgeWalSlot } from './wal-slot.health';
import { DEFAULT_OUTBOX_NAME, ofOutbox } from '../core/outbox-name';
import { WalPositionTable } from './wal-position.table';
import { WalStreamLock } from './wal-stream.lock';

// How long the stream waits before trying again after its connection (or its lock's) failed: the
// server restarting, or unreachable. A standby does not poll: it waits for the stream lock.
const RECONNECT_MS = 1_000;
// Just after the lock is granted, the previous holder's WAL sender may still be exiting and hold the
// slot for some milliseconds: the slot is asked for again at this pace, for at most SLOT_RELEASE_MS.
const SLOT_RETRY_MS = 20;
const SLOT_RELEASE_MS = 5_000;
// Batches decoded ahead of the one in flight.
const BATCHES_AHEAD = 4;

/** The module's pieces, and the slot and publication, the prefix and the write of the WAL delivery plan. */
export interface WalStreamConfig extends StreamDependencies {
  slot: WalNames;
  /** The prefix of the WAL messages the writer emits. */
  prefix: string;
  /** What the writers write (`wal.write`): rows the stream settles by deleting them, or WAL messages. */
  write: WalWrite;
}

/**
 * The WAL delivery mode's stream: has its slot made (WalSlotKeeper, which makes it anew when the
 * stream finds it gone), then streams the outbox's WAL messages to the transports from the position
 * it saved, one instance at a time (the stream lock; the others stand by and take over when its
 * connection ends). Each connection gets a fresh relay: what the previous one had not confirmed
 * comes again from the slot, never twice from memory.
 */
export class WalStream implements DeliveryStream {
  private transports = new Map<string, OutboxTransport>();
  private relay: StreamRelay | undefined;
  private reader: WalReader | undefined;
  private reconnect: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastEnd: string | undefined;
  private restarting: StreamRelay | undefined;
  private removeMetrics: (() => void) | undefined;
  private lock: WalStreamLock | undefined;
  private lockedAt = 0;
  private position: RememberedPosition | undefined;
  private readonly slot: WalSlotKeeper;

  constructor(private readonly config: WalStreamConfig) {
    this.slot = new WalSlotKeeper(config);
  }

  /** When the oldest event received and not yet published arrived (the broker away or refusing keeps it so). */
  get waitingSince(): number | undefined {
    return this.relay?.waitingSince;
  }

  /** With `wal.write: 'message'`: whether this database's slot decodes a message written now (see WalSlotWatch). */
  get sourceReady(): boolean {
    return this.slot.slotUsable;
  }

  /** The last time this instance made the slot anew over a former one (see StreamIncident). */
  get incident(): StreamIncident | undefined {
    return this.slot.incident;
  }

  /** The replication slot, by name. */
  get source(): StreamSource {
    return { name: this.config.slot.slotName };
  }

  /** The slot and the stream judged (see judgeWalSlot); `wal.maxRetainedBytes` unless the caller gives its own limit. */
  async health(thresholds: StreamHealthThresholds): Promise<StreamHealth> {
    const { slotName } = this.config.slot;
    let lag;
    try {
      lag = await this.lag();
    } catch (error) {
      return { healthy: false, reasons: [`the replication slot cannot be read: ${errorText(error)}`], details: {} };
    }
    const maxRetainedBytes = thresholds.maxRetainedBytes !== undefined ? thresholds.maxRetainedBytes : (this.config.settings.wal.maxRetainedBytes ?? WAL_DEFAULTS.maxRetainedBytes);
    const waitingMs = this.waitingSince === undefined ? undefined : Date.now() - this.waitingSince;
    return judgeWalSlot(slotName, lag, { maxRetainedBytes, maxLagMs: thresholds.maxLagMs }, this.incident, waitingMs);
  }

  /** Messages the stream has published since it last (re)connected. */
  get publishedCount(): number {
    return this.relay?.publishedCount ?? 0;
  }

  async prepare(): Promise<void> {
    const { slot, settings, table, connection, metrics } = this.config;
    loadPgLogicalReplication();
    await this.slot.prepare(settings.relay);
    if (metrics) {
      const prom = loadOptional<typeof PromClient>('prom-client', 'metrics');
      this.removeMetrics = registerWalSlotMetrics(prom, metrics, table.name ?? DEFAULT_OUTBOX_NAME, slot.slotName, { lag: () => this.lag(), incidents: () => this.slot.incidents });
    }
    this.slot.startWatch();
    if (!settings.relay) return;
    if (this.readerThread === 'worker') {
      checkReaderThreadEntry();
      checkReaderThreadConnection(replicationConnection(connection));
    }
    this.transports = this.config.transports();
    this.lock = new WalStreamLock(replicationConnection(connection), slot.slotName, (error) => this.lockLost(error));
    this.position = new RememberedPosition(new WalPositionTable(connection, table, slot.slotName), this.config.logger);
  }

  start(): void {
    if (!this.lock) return;
    const { slot, table } = this.config;
    this.config.logger.log(`WAL relay${ofOutbox(table.name)} streaming slot "${slot.slotName}" (publication "${slot.publicationName}") of "${OutboxTable.of(table)}".`);
    // Connected now, while standing by: a takeover then publishes at once.
    for (const transport of new Set(this.transports.values())) void transport.connect?.().catch(() => undefined);
    this.read();
  }

  async stop(steps: StopSteps): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnect);
    const { relay, reader } = this;
    this.relay = undefined;
    this.reader = undefined;
    // What the stream had not confirmed comes again from the slot, to whichever instance streams next.
    if (relay) await steps.run('finishing the batch in flight', relay.stop(), this.config.settings.shutdownTimeoutMs + steps.stepTimeoutMs);
    if (reader) await steps.run('closing the replication connection', reader.stop());
    if (this.position) await steps.run("saving the stream's position", this.position.flushed());
    // Last: a standby takes over as soon as this lock's connection ends.
    if (this.lock) await steps.run('releasing the stream lock', this.lock.release());
  }

  dispose(): void {
    this.slot.stopWatch();
    this.removeMetrics?.();
    this.removeMetrics = undefined;
  }

  /** The slot's lag (WAL retained, confirmation delay, whether an instance streams it); see WalSlotKeeper.lag. */
  lag(): Promise<WalSlotLag | undefined> {
    return this.slot.lag();
  }

  private read(): void {
    void this.stream().catch((error: unknown) => this.retryLater(error));
  }

  /** Waits for the stream lock (a standby waits here), then streams from the saved position. */
  private async stream(): Promise<void> {
    if (this.stopped || !this.lock || !this.position) return;
    if (!this.lock.held) {
      await this.lock.acquire();
      this.lockedAt = Date.now();
    }
    if (this.stopped) return;
    const from = await this.position.read();
    if (this.stopped) return;
    const position = this.position;
    const { settings, table, connection, slot, prefix, logger } = this.config;
    // Whatever this instance writes: another instance of the app may write rows (a rolling change of wal.write).
    const rows = new StreamRowSettlement(connection, new StreamOwnedRows(table));
    const overflow = new TableOverflow(connection, table, { notifyChannel: settings.notifications ? notificationChannel(table) : undefined, deadLetterPolicy: settings.deadLetterPolicy });
    // What an earlier stream read and handed on to the table comes again from the slot: not published twice.
    const replayedUpTo = await overflow.replayWindow();
    if (this.stopped) return;
    const { batchSize, maxBatchesInFlight, publishTimeoutMs, backoff, retryIf } = settings;
    let reader: WalReader | undefined = undefined;
    const relay = new StreamRelay({
      transports: this.transports,
      batchSize,
      maxBatchesInFlight,
      maxBuffered: batchSize * BATCHES_AHEAD,
      publishTimeoutMs,
      retryPolicy: new RetryPolicy(Number.MAX_SAFE_INTEGER, backoff),
      retryIf,
      envelopeHeaders: settings.envelope.headers,
      observer: this.config.observer(),
      relayId: settings.relayId,
      logger,
      overflow,
      divertAfterAttempts: settings.wal.attemptsBeforeTable ?? WAL_DEFAULTS.attemptsBeforeTable,
      replayedUpTo,
      published: (messages) => (position.published(messages), rows.acknowledged(messages)),
      confirm: async (lsn, carriedMessages) => {
        // Rows go before the slot moves past them: a row still there after a confirmation would wait forever.
        await rows.settle();
        await reader?.confirm(lsn);
        // Only positions past outbox messages are worth a write: a keepalive's would write after every write.
        if (carriedMessages) position.remember(lsn);
      },
      // Ends the stream (closing the replication connection) rather than holding it while retrying.
      onTableFailure: (error) => {
        void reader?.stop().catch(() => undefined);
        void this.restart(relay, new Error(walTableUnreachable(errorText(error))));
      },
    });
    const reading: PgoutputReaderConfig = {
      ...slot,
      connection: replicationConnection(connection),
      prefix,
      pausedTable: OutboxTable.of(table).paused.name,
      // Streaming again: the next end is news, even with the same text as the last.
      onCommit: (commit) => ((this.lastEnd = undefined), relay.accept(commit)),
      onCaughtUp: (lsn) => ((this.lastEnd = undefined), relay.caughtUp(lsn)),
      onEnd: (error) => void this.restart(relay, error),
    };
    reader = createWalReader(reading, this.readerThread, batchSize * BATCHES_AHEAD);
    this.relay = relay;
    this.reader = reader;
    reader.start(from).catch((error: unknown) => void this.restart(relay, error));
  }

  /** The lock's connection ended while this instance streamed: another may take the slot, so this stream ends. */
  private lockLost(error: Error): void {
    const relay = this.relay;
    if (!relay) return;
    void this.reader?.stop().catch(() => undefined);
    void this.restart(relay, new Error(`the connection holding the stream lock ended (${errorText(error)})`));
  }

  /** Waiting for the lock or reading the saved position failed (the server is away): tried again later. */
  private retryLater(error: unknown): void {
    if (this.stopped) return;
    const text = errorText(error);
    if (text !== this.lastEnd) this.config.logger.warn(`WAL relay: cannot stream slot "${this.config.slot.slotName}" yet (${text}); trying again every ${RECONNECT_MS} ms.`);
    this.lastEnd = text;
    clearTimeout(this.reconnect);
    this.reconnect = setTimeout(() => this.read(), RECONNECT_MS);
  }

  private async restart(relay: StreamRelay, error: unknown): Promise<void> {
    // One reconnection per ended stream, however many ways it reported its end.
    if (this.restarting === relay) return;
    this.restarting = relay;
    await relay.stop();
    if (this.stopped || this.relay !== relay) return;
    const text = errorText(error);
    // The lock was just granted and the previous holder's WAL sender has not let go of the slot yet.
    const slotStillHeld = this.lock?.held === true && /is active for PID/i.test(text) && Date.now() - this.lockedAt < SLOT_RELEASE_MS;
    if (!slotStillHeld && text !== this.lastEnd) this.config.logger.warn(`WAL relay: the stream of slot "${this.config.slot.slotName}" ended (${text}); reading again in ${RECONNECT_MS} ms.`);
    if (!slotStillHeld) this.lastEnd = text;
    const remake = WalSlotKeeper.isGone(text);
    this.reconnect = setTimeout(() => (remake ? this.remakeSlot() : this.read()), slotStillHeld ? SLOT_RETRY_MS : RECONNECT_MS);
  }

  /** `wal.readerThread`: where the WAL is read and decoded. */
  private get readerThread(): WalReaderThread {
    return this.config.settings.wal.readerThread ?? WAL_DEFAULTS.readerThread;
  }

  /** Makes the slot anew (this instance holds the stream lock), then reads again; tried again later when that fails. */
  private remakeSlot(): void {
    if (this.stopped) return;
    void this.slot.remake().then(
      () => this.read(),
      (error: unknown) => this.retryLater(error),
    );
  }
}
