import type { TypeOrmModuleOptions } from '@nestjs/typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable } from '@nest-outbox/outbox';
import { settings } from '../settings.js';
import { CreateShopTables1767225600000 } from './create-shop-tables.migration.js';

export function databaseOptions(): TypeOrmModuleOptions {
  const common = {
    autoLoadEntities: true, // the entities of every forFeature(), the outbox's and the inbox's
    migrations: [CreateOutboxTable, CreateInboxTable, CreateInboxPoisonTable, CreateShopTables1767225600000],
    migrationsRun: true, // applies the ones not yet applied at startup
  };
  if (settings.databaseUrl) return { ...common, type: 'postgres', url: settings.databaseUrl };
  return { ...common, type: 'better-sqlite3', database: settings.sqliteFile };
}
