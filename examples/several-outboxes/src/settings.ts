/** What the app reads from its environment, in one place. */
export const settings = {
  httpPort: Number(process.env.PORT ?? 3000),
  /** One database per region: eu and us through TypeORM, latam through a pg pool of its own. */
  euDatabaseUrl: required('EU_DATABASE_URL'),
  usDatabaseUrl: required('US_DATABASE_URL'),
  latamDatabaseUrl: required('LATAM_DATABASE_URL'),
  kafkaBrokers: required('KAFKA_BROKERS').split(','),
  ordersTopic: process.env.ORDERS_TOPIC ?? 'orders',
  refundsTopic: process.env.REFUNDS_TOPIC ?? 'refunds',
  /** The us outbox's replication slot: a slot is the server's, so two apps on one server need two names. */
  usSlotName: process.env.US_WAL_SLOT ?? 'outbox_us_outbox_messages',
};

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name} (see docs/several-outboxes.md).`);
  return value;
}
