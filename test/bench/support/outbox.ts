// The library as the benchmarks use it. Imported by relative path (not through the
// `@nest-outbox/outbox` alias) so that plain tsc output runs under node without a path resolver;
// it is the same source tree the alias points at.
// The package's entry points (they share no name), then the internals the benchmarks reach into.
export * from '../../../libs/outbox/src/index';
export * from '../../../libs/outbox/src/core/index';
export * from '../../../libs/outbox/src/typeorm/index';
export * from '../../../libs/outbox/src/observability/index';
export * from '../../../libs/outbox/src/testing/index';
export * from '../../../libs/outbox/src/kafka/index';
export { dropWalSlot } from '../../../libs/outbox/src/wal/wal-slot.setup';
export { WalPositionTable } from '../../../libs/outbox/src/wal/wal-position.table';
export { PgPoolConnection } from '../../../libs/outbox/src/adapters/pg/pg-pool.connection';
export { PoisonPolicy } from '../../../libs/outbox/src/core/poison/poison-policy';
export { ClientProxyTransport } from '../../../libs/outbox/src/transports/client-proxy.transport';
export { PostgresOutboxDialect } from '../../../libs/outbox/src/sql/dialects/postgres-outbox.dialect';
export { toOutgoingMessage } from '../../../libs/outbox/src/core/envelope';
export { OUTBOX_SETTINGS, OUTBOX_STREAM } from '../../../libs/outbox/src/nest/outbox.constants';
export type { DeliveryStream } from '../../../libs/outbox/src/core/stream/delivery-stream.port';
export type { SqlStatement } from '../../../libs/outbox/src/core/sql-connection.port';
export { waitUntil as pollUntil } from '../../../libs/outbox/src/testing/contracts/contract-runner';
