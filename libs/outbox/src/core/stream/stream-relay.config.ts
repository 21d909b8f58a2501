import type { EnvelopeHeaders } from '../cloudevents/envelope-options';
import type { RetryIf } from '../failure-classification';
import type { OutboxTransport } from '../outbox-transport.port';
import type { RelayObserver } from '../observe/relay-observer';
import type { RetryPolicy } from '../retry-policy';
import type { StreamOverflow } from './stream-overflow.port';
import type { StreamMessage } from './stream-message';

/** What a StreamRelay publishes with, and whom it tells (see StreamRelay). */
export interface StreamRelayConfig {
  transports: ReadonlyMap<string, OutboxTransport>;
  /** Messages handed to the transports per batch. */
  batchSize: number;
  /** Batches published at once, their aggregates apart (see `drain`). Default 1. */
  maxBatchesInFlight?: number;
  /** Messages decoded and held ahead of the batch in flight; `accept` waits while this many wait. */
  maxBuffered: number;
  publishTimeoutMs: number;
  /**
   * Backoff between attempts of a batch's failed messages. The stream never gives a message up:
   * give it a policy without an attempt limit (`new RetryPolicy(Number.MAX_SAFE_INTEGER, backoff)`).
   */
  retryPolicy: RetryPolicy;
  retryIf?: RetryIf;
  /** Which envelope fields also go as `outbox-*` headers (the `envelope.headers` option). Default `'all'`. */
  envelopeHeaders?: EnvelopeHeaders;
  observer: RelayObserver;
  /** Who publishes, as observers are told (`relayId`). */
  relayId: string;
  logger: { warn(message: string): void };
  /**
   * Where messages go after `divertAfterAttempts` failed attempts (or a failure that is final), with
   * their aggregate's later ones, so that the stream moves on. Without it, the stream waits.
   */
  overflow?: StreamOverflow;
  divertAfterAttempts?: number;
  /**
   * The server's WAL end when this stream connected: commits up to it may have been read by an
   * earlier stream, which may have handed some messages on before it stopped (moved to the table,
   * where the table relay may have published them already). Those are not published again.
   */
  replayedUpTo?: bigint;
  /**
   * Tells the server that everything up to this commit is published: the slot may drop the WAL
   * before it. `carriedMessages`: some of the commits confirmed now held outbox messages (a position
   * worth saving durably); false when only commits without any (other tables, keepalives) moved it.
   */
  confirm(lsn: bigint, carriedMessages: boolean): Promise<void> | void;
  /** The broker acknowledged these messages (before their position is confirmed): what stats count. */
  published?(messages: readonly StreamMessage[]): void;
  /**
   * Called when reading or writing the outbox table (`overflow`) fails; the relay tries again until
   * stopped. An owner that holds a replication connection stops the relay and ends the stream here:
   * a PostgreSQL server shutting down refuses the table's queries while it waits for its WAL sender,
   * and the WAL sender waits for this relay's confirmation, which a relay retrying with the
   * connection open never gives (the stream reconnects and replays from the last confirmation).
   */
  onTableFailure?(error: unknown): void;
}
