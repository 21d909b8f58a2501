import { ConfigError, loadOrderServiceConfig } from './order-service.config';

describe('loadOrderServiceConfig', () => {
  it('defaults to SQLite and TCP, so the demo runs with nothing installed', () => {
    const config = loadOrderServiceConfig({});
    expect(config.database).toMatchObject({ type: 'better-sqlite3' });
    expect(config.broker).toEqual({ transport: 'tcp', host: '127.0.0.1', port: 4100 });
    expect(config).toMatchObject({ httpPort: 3000, ordersTopic: 'orders', outbox: { relay: true, pollIntervalMs: 5_000 } });
  });

  it('switches to PostgreSQL and Kafka by configuration', () => {
    const config = loadOrderServiceConfig({ DATABASE_URL: 'postgres://app@db:5432/orders', BROKER: 'kafka', KAFKA_BROKERS: 'k1:9092, k2:9092' });
    expect(config.database).toEqual({ type: 'postgres', url: 'postgres://app@db:5432/orders' });
    expect(config.broker).toMatchObject({ transport: 'kafka', brokers: ['k1:9092', 'k2:9092'], groupId: 'order-service-consumer' });
  });

  it('streams from the WAL on PostgreSQL when OUTBOX_DELIVERY=wal; the table mode otherwise', () => {
    expect(loadOrderServiceConfig({}).outbox.delivery).toBe('table');
    expect(loadOrderServiceConfig({ DATABASE_URL: 'postgres://app@db:5432/orders', OUTBOX_DELIVERY: 'wal' }).outbox.delivery).toBe('wal');
  });

  it('switches to MariaDB by configuration', () => {
    expect(loadOrderServiceConfig({ DATABASE_URL: 'mariadb://app:secret@db:3306/orders' }).database).toEqual({ type: 'mariadb', url: 'mysql://app:secret@db:3306/orders' });
  });

  it.each([
    [{ DATABASE_URL: 'mongodb://x' }, /DATABASE_URL "mongodb:\/\/x" is not supported/],
    [{ BROKER: 'carrier-pigeon' }, /BROKER "carrier-pigeon"/],
    [{ PORT: '70000' }, /PORT "70000"/],
    [{ OUTBOX_POLL_INTERVAL_MS: '-1' }, /OUTBOX_POLL_INTERVAL_MS "-1"/],
    [{ OUTBOX_RELAY: 'maybe' }, /OUTBOX_RELAY "maybe"/],
    [{ ORDERS_TOPIC: 'orders topic' }, /ORDERS_TOPIC "orders topic"/],
    [{ OUTBOX_DELIVERY: 'stream' }, /OUTBOX_DELIVERY "stream" must be table or wal/],
    [{ OUTBOX_DELIVERY: 'wal' }, /OUTBOX_DELIVERY "wal" .* set DATABASE_URL to a postgres:\/\/ URL/],
  ])('rejects %j naming the variable', (env, message) => {
    expect(() => loadOrderServiceConfig(env)).toThrow(ConfigError);
    expect(() => loadOrderServiceConfig(env)).toThrow(message);
  });
});

describe('DATABASE_URL in errors', () => {
  it('never shows the password of a mistyped URL', () => {
    expect(() => loadOrderServiceConfig({ DATABASE_URL: 'postgress://orders:s3cret-pa55@db.internal:5432/orders' })).toThrow(
      'DATABASE_URL "postgress://orders:***@db.internal:5432/orders" is not supported',
    );
    expect(() => loadOrderServiceConfig({ DATABASE_URL: 'postgress://orders:s3cret-pa55@db.internal:5432/orders' })).not.toThrow(/s3cret/);
  });
});
