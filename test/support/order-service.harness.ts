import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { createOrderServiceApp, startRelayWhenListening } from '../../apps/order-service/src/bootstrap';
import type { BrokerConfig, DatabaseConfig, OrderServiceConfig } from '../../apps/order-service/src/config/order-service.config';
import { privateMariaDbDatabase, privatePostgresSchema } from './databases';
import { requireService } from './services';
import { freePort } from './free-port';

export interface RunningOrderService {
  app: INestApplication;
  config: OrderServiceConfig;
  dataSource: DataSource;
  outboxRows(): Promise<Array<{ status: string; attempts: number; last_error: string | null; aggregate_id: string; event_type: string }>>;
  close(): Promise<void>;
  /** Drops the private database only, for a test that closed the app itself. */
  dropDatabase(): Promise<void>;
}

/** Starts the demo on a private database (temp SQLite file or fresh PostgreSQL schema) and a private topic. */
export async function startOrderService(
  database: 'sqlite' | 'postgres' | 'mariadb',
  broker: 'tcp' | 'kafka',
  overrides: Partial<Omit<OrderServiceConfig, 'outbox'>> & { outbox?: Partial<OrderServiceConfig['outbox']> } = {},
): Promise<RunningOrderService> {
  const suffix = randomBytes(5).toString('hex');
  const db = await privateDatabase(database);
  const brokerConfig: BrokerConfig =
    broker === 'kafka'
      ? { transport: 'kafka', brokers: requireService('kafka').split(','), clientId: `order-service-${suffix}`, groupId: `order-consumer-${suffix}` }
      : { transport: 'tcp', host: '127.0.0.1', port: await freePort() };
  const config: OrderServiceConfig = {
    httpPort: 0,
    database: db.config,
    broker: brokerConfig,
    ordersTopic: `orders-${suffix}`,
    ...overrides,
    // Short retry delays so that recovery after a broker outage is seen within seconds.
    outbox: { relay: true, pollIntervalMs: 200, backoffInitialMs: 200, backoffMaxMs: 2_000, ...overrides.outbox },
  };
  const app = await createOrderServiceApp(config, false);
  const consumers = app.startAllMicroservices();
  await consumers;
  await app.init();
  startRelayWhenListening(app, consumers);
  const dataSource = app.get(DataSource);
  return {
    app,
    config,
    dataSource,
    outboxRows: () =>
      dataSource.query(`SELECT status, attempts, last_error, aggregate_id, event_type FROM outbox_messages ORDER BY position`),
    close: async () => {
      await app.close();
      await db.drop();
    },
    dropDatabase: () => db.drop(),
  };
}

async function privateDatabase(database: 'sqlite' | 'postgres' | 'mariadb'): Promise<{ config: DatabaseConfig; drop(): Promise<void> }> {
  if (database === 'mariadb') {
    const { url, drop } = await privateMariaDbDatabase('orders');
    return { config: { type: 'mariadb', url }, drop };
  }
  if (database === 'postgres') {
    const { url, schema, drop } = await privatePostgresSchema('orders');
    return { config: { type: 'postgres', url, schema }, drop };
  }
  const dir = mkdtempSync(join(tmpdir(), 'order-service-'));
  return { config: { type: 'better-sqlite3', database: join(dir, 'orders.sqlite') }, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

