// Everything that changes between part 1 (SQLite + TCP) and part 2 (PostgreSQL + Kafka) of the
// tutorial comes from the environment: the code is the same in both.
export const settings = {
  httpPort: Number(process.env.PORT ?? 3000),
  /** Unset: SQLite in `sqliteFile`. A `postgres://` URL: PostgreSQL. */
  databaseUrl: process.env.DATABASE_URL,
  sqliteFile: process.env.SQLITE_FILE ?? 'shop.sqlite',
  /** Unset: TCP to this app's own listener on `tcpPort`. Comma-separated `host:port` list: Kafka. */
  kafkaBrokers: process.env.KAFKA_BROKERS?.split(','),
  tcpPort: Number(process.env.TCP_PORT ?? 3001),
  /** The topic (Kafka) or event pattern (TCP) of order events. */
  ordersTopic: process.env.ORDERS_TOPIC ?? 'orders',
};
