import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable } from '@nest-outbox/outbox';
import { runMigrationsUnderLock } from '@nest-outbox/outbox/typeorm';
import type { DatabaseConfig } from '../config/order-service.config';
import { CreateOrderTables1767225600001 } from './create-order-tables.migration';
import { CreateOrderTimeline1767225600002 } from './create-order-timeline.migration';

/**
 * TypeORM options for the demo: migrations create every table, the outbox's included; no synchronize.
 * `migrationsRun` is off: `migratedDataSource` runs them under a lock instead.
 */
export function databaseOptions(config: DatabaseConfig): TypeOrmModuleOptions {
  const common = {
    autoLoadEntities: true,
    migrations: [CreateOutboxTable, CreateOrderTables1767225600001, CreateInboxTable, CreateOrderTimeline1767225600002, CreateInboxPoisonTable],
    migrationsRun: false,
    synchronize: false,
  };
  if (config.type === 'postgres') {
    return {
      ...common,
      type: 'postgres',
      url: config.url,
      ...(config.schema ? { schema: config.schema, extra: { options: `-c search_path=${config.schema}` } } : {}),
    };
  }
  if (config.type === 'mariadb') return { ...common, type: 'mariadb', url: config.url };
  if (config.database !== ':memory:') mkdirSync(dirname(config.database), { recursive: true });
  return { ...common, type: 'better-sqlite3', database: config.database, enableWAL: true, prepareDatabase: switchToWal };
}

/** How long an instance tries to switch a SQLite file to WAL while others hold it. */
const WAL_SWITCH_TIMEOUT_MS = 10_000;

/**
 * SQLite's WAL journal, switched on before TypeORM's own `journal_mode = WAL` (then a no-op).
 * Instances started together on a new file switch it at the same moment, and SQLite answers some
 * of them SQLITE_BUSY at once instead of waiting (its busy handler steps aside where two
 * connections could deadlock): 13 of 120 opens, 4 processes at a time, failed so here, and the
 * instance's first start with them. Tried again until WAL_SWITCH_TIMEOUT_MS.
 */
async function switchToWal(db: { pragma(source: string): unknown }): Promise<void> {
  const deadline = Date.now() + WAL_SWITCH_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw error;
      await delay(20);
    }
  }
}

/**
 * TypeOrmModule's `dataSourceFactory`: instances that start together (a rolling deployment, an
 * autoscaler) run the migrations one after the other, under a lock; the others find them done.
 */
export async function migratedDataSource(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = await new DataSource(options).initialize();
  try {
    await runMigrationsUnderLock(dataSource, { logger: new Logger('Migrations') });
  } catch (error) {
    // TypeOrmModule retries with a new data source: this one must not keep its connections.
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}
