/** What the app reads from its environment, in one place. */
export const settings = {
  httpPort: Number(process.env.PORT ?? 3000),
  databaseUrl: required('DATABASE_URL'),
  kafkaBrokers: required('KAFKA_BROKERS').split(','),
  ordersTopic: process.env.ORDERS_TOPIC ?? 'orders',
};

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name} (see README.md) before starting the app.`);
  return value;
}
