import type { DynamicModule, ModuleMetadata } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions, type EntitySchema, type MigrationInterface } from 'typeorm';
import { CreateOutboxTable, OutboxModule } from '@nest-outbox/outbox';
import { captureReader, type CaptureMode, type CaptureReader } from './captured-messages';
import { isolatedDatabase } from './outbox-harness';
import { PARCEL_ENTITIES } from './parcel.fixtures';

type Entities = Array<Function | EntitySchema>;

/** TypeORM on a test database: its entities (auto-loaded ones too) synchronized, the outbox table migrated. */
export function testTypeOrmOptions(database: Partial<DataSourceOptions>, entities: Entities, migration: Function | MigrationInterface = CreateOutboxTable): TypeOrmModuleOptions {
  return { ...database, entities, autoLoadEntities: true, synchronize: true, migrations: [migration], migrationsRun: true, logging: false } as TypeOrmModuleOptions;
}

/** Compiles and starts a testing module, with Nest's logger silenced. */
export async function startTestingModule(metadata: ModuleMetadata): Promise<TestingModule> {
  const module = await Test.createTestingModule(metadata).compile();
  module.useLogger(false);
  await module.init();
  return module;
}

/** A started app whose outbox module only captures (relay off), in the table or the WAL mode. */
export interface CapturingApp {
  module: TestingModule;
  dataSource: DataSource;
  captured: CaptureReader;
  /** The event types captured for one aggregate, in the order they were written. */
  eventsOf(aggregateId: string): Promise<string[]>;
  /** Drops what the capture mode made beside the tables, closes the module, drops the database. */
  close(): Promise<void>;
}

export interface CapturingAppSetup extends Pick<ModuleMetadata, 'imports' | 'providers'> {
  entities: Entities;
  /** How the app brings in TypeORM (default TypeOrmModule.forRoot), for libraries that wrap its data source. */
  typeOrm?: (options: TypeOrmModuleOptions) => DynamicModule;
}

/** Starts `setup` on a private database of `mode` (a fresh PostgreSQL schema for both PostgreSQL modes). */
export async function startCapturingApp(mode: CaptureMode, setup: CapturingAppSetup): Promise<CapturingApp> {
  const isolated = await isolatedDatabase(mode === 'postgres-wal' ? 'postgres' : mode);
  const captured = captureReader(mode);
  const typeOrm = setup.typeOrm ?? ((options: TypeOrmModuleOptions) => TypeOrmModule.forRoot(options));
  let module: TestingModule | undefined;
  try {
    module = await startTestingModule({
      imports: [typeOrm(testTypeOrmOptions(isolated.options, setup.entities)), ...(setup.imports ?? []), OutboxModule.forRoot(captured.options({ relay: false }))],
      providers: setup.providers,
    });
  } catch (error) {
    await isolated.drop();
    throw error;
  }
  const started = module;
  const dataSource = started.get(DataSource);
  return {
    module: started,
    dataSource,
    captured,
    eventsOf: async (aggregateId) => (await captured.of(dataSource, aggregateId)).map((message) => message.eventType),
    close: async () => {
      try {
        await captured.drop(dataSource);
        await started.close();
      } finally {
        await isolated.drop();
      }
    },
  };
}

/** TypeORM on `schema` of the shared PostgreSQL server (its search_path too): the parcel entities synchronized, the outbox table migrated, no connection retries. */
export function postgresSchemaTypeOrm(url: string, schema: string, poolExtra: Record<string, unknown> = {}): TypeOrmModuleOptions {
  return { type: 'postgres', url, schema, extra: { options: `-c search_path=${schema}`, ...poolExtra }, entities: PARCEL_ENTITIES, synchronize: true, migrations: [CreateOutboxTable], migrationsRun: true, retryAttempts: 0 };
}
