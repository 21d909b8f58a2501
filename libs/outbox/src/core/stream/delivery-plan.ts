import type { OutboxTransport } from '../outbox-transport.port';
import type { ResolvedOutboxSettings } from '../outbox-options';
import type { RelayObserver } from '../observe/relay-observer';
import type { SqlConnection } from '../sql-connection.port';
import type { DeliveryStream } from './delivery-stream.port';
import type { WalWrite } from './wal-options';

type PlanLogger = { log(message: string): void; warn(message: string): void; error(message: string): void };

/**
 * Something an earlier run in a streaming mode may have left in this database (events only its
 * source holds, rows only its stream would publish), looked at when the table relay starts: it
 * throws, naming what to do, while events would be lost, and hands the table relay what it can.
 */
export type LeftBehindCheck = (connection: SqlConnection, logger: PlanLogger) => Promise<void>;

/** What a streaming delivery's stream is made with: the module's pieces, none of them the delivery's own. */
export interface StreamDependencies {
  settings: ResolvedOutboxSettings;
  /** The outbox's table, and its name (`OutboxModule.forRoot({ name })`) for the gauges' `outbox` label. */
  table: { tableName: string; schema?: string; name?: string };
  connection: SqlConnection;
  /** The transports by name, resolved when the stream is prepared (after every module is constructed). */
  transports: () => Map<string, OutboxTransport>;
  /** Read for each new connection's relay: observers may join after the stream was made. */
  observer: () => RelayObserver;
  logger: PlanLogger;
  /** The source's gauges, when metrics are on. */
  metrics?: { registry?: unknown; prefix: string };
  /** How long a reading of the source's lag is shared (`stats.refreshIntervalMs`). */
  lagReadingMs: number;
}

/** The table mode: the writer inserts rows, the table relay leases them. */
export interface TableDeliveryPlan {
  readonly mode: 'table';
  /** Run by the table relay at start, one per streaming mode that may have run on this database before. */
  readonly leftBehind: readonly LeftBehindCheck[];
}

/**
 * A streaming mode (`wal`): the writer puts rows the stream owns in the table (`write: 'row'`) or
 * messages in the change log under `prefix` (`write: 'message'`), delayed ones as rows the table
 * relay owns; the stream reads them from its source; the table relay publishes what the stream moved
 * to the table. Which source, and how it is read, is the stream's own business.
 */
export interface StreamDeliveryPlan {
  readonly mode: 'wal';
  readonly prefix: string;
  readonly write: WalWrite;
  /** Makes the stream (once, in this mode only). */
  createStream(dependencies: StreamDependencies): DeliveryStream;
}

/**
 * How committed events reach the relay, resolved once from the options (`delivery/delivery-modes.ts`):
 * everything that differs between the delivery modes reads this one object (the writer's encoding,
 * which stream runs, what the table relay checks at start), rather than the `delivery` option.
 */
export type DeliveryPlan = TableDeliveryPlan | StreamDeliveryPlan;
