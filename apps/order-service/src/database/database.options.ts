import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable } from '@nest-outbox/outbox';
import type { DatabaseConfig } from '../config/order-service.config';
import { CreateOrderTables1767225600001 } from './create-order-tables.migration';
import { CreateOrderTimeline1767225600002 } from './create-order-timeline.migration';

/** TypeORM options for the demo: migrations create every table, the outbox's included; no synchronize. */
export function databaseOptions(config: DatabaseConfig): TypeOrmModuleOptions {
  const common = {
    autoLoadEntities: true,
    migrations: [CreateOutboxTable, CreateOrderTables1767225600001, CreateInboxTable, CreateOrderTimeline1767225600002, CreateInboxPoisonTable],
    migrationsRun: true,
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
  return { ...common, type: 'better-sqlite3', database: config.database, enableWAL: true };
}
