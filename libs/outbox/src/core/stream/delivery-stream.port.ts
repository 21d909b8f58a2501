/** How far a stream is behind its source: what the source keeps for it, and how late it confirms. */
export interface StreamLag {
  /** Bytes the source retains from the stream's confirmed position to its current one. */
  retainedBytes: number;
  /** Seconds between the source flushing a change and the stream confirming it; `null` when caught up or not streamed. */
  lagSeconds: number | null;
  /** Whether an instance streams the source now. */
  active: boolean;
  /** The source can stream nothing any more (the server invalidated it): a relaying instance makes it anew. */
  invalidated?: boolean;
  /** The source of this name belongs to another database (named here): it is not this outbox's. */
  foreignDatabase?: string;
}

/** A source made anew while a saved position says the former one had been read: what it held was not decoded. */
export interface StreamIncident {
  /** What happened to the former source. */
  reason: 'missing' | 'invalidated';
  /** Where the former source had been read up to, and where the new one starts (the source's positions, as text). */
  formerPosition?: string;
  startsAt: string;
  /** Events of the gap kept anyway: rows handed to the table relay (`wal.write: 'row'`). */
  keptRows: number;
  /** Whether events committed in the gap may be lost (the source held the only copy). */
  eventsMayBeLost: boolean;
  at: Date;
}

/** What a stream reads from, as operators know it: the WAL mode's is its replication slot. */
export interface StreamSource {
  /** Its name in the database (the WAL mode's slot name): what stats, health and logs show. */
  readonly name: string;
}

/** When a stream's health check reports down; `null` turns a limit off. */
export interface StreamHealthThresholds {
  /** Down when the source retains more than this many bytes; left out, the delivery's own option decides (`wal.maxRetainedBytes`). */
  maxRetainedBytes?: number | null;
  /** Down when the stream confirms, or has held a received event, longer than this. */
  maxLagMs: number | null;
}

/** A stream's judgement of itself and its source, for a health indicator: every reason it is down, and its figures. */
export interface StreamHealth {
  healthy: boolean;
  reasons: string[];
  details: Record<string, unknown>;
}

/** The steps of a stop, each bounded by whoever stops the stream (the app's shutdown). */
export interface StopSteps {
  /** How long one step may take by default. */
  readonly stepTimeoutMs: number;
  run(stage: string, work: Promise<unknown>, timeoutMs?: number): Promise<void>;
}

/**
 * A delivery that streams commits from the database's change log to the transports, beside the
 * table relay (which still publishes delayed rows and what the stream moved to the table). It is
 * made only in its own mode, by its delivery plan (`StreamDeliveryPlan.createStream`); another
 * database's change log would be one more implementation and one more entry in
 * `delivery/delivery-modes.ts`, with nothing else to wire.
 */
export interface DeliveryStream {
  /** What it streams from, by the name operators know. */
  readonly source: StreamSource;
  /** Messages it published since it last (re)connected. */
  readonly publishedCount: number;
  /** Checks the server and creates what the stream reads, the first time (at module init). */
  prepare(): Promise<void>;
  /** Streams, or stands by for its turn (at bootstrap). */
  start(): void;
  /** Stops: the batch in flight, the connection, the saved position, the turn, each a bounded step. */
  stop(steps: StopSteps): Promise<void>;
  /** Takes what it registered (its gauges) away again. */
  dispose(): void;
  /** The source's lag, read at most once per stats interval whoever asks; `undefined` when the source is gone. */
  lag(): Promise<StreamLag | undefined>;
  /** Judges the source and the stream against the thresholds; a source that cannot be read is a reason, not a throw. */
  health(thresholds: StreamHealthThresholds): Promise<StreamHealth>;
  /** The last time this instance made the source anew over a former one, if it did. */
  readonly incident?: StreamIncident;
  /**
   * Whether what a writer puts in the change log now is decoded by the source (false while the
   * source is missing or invalidated, as last watched, where the log holds the only copy); the writer then
   * writes rows instead. True where nothing is watched.
   */
  readonly sourceReady: boolean;
  /** When the oldest event this instance received and has not published (or moved to the table) arrived, ms since the epoch; `undefined` when none waits. */
  readonly waitingSince: number | undefined;
}
