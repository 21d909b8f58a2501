import type { ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { silentLogger } from './silent-logger';

/**
 * Starts a testing module on `database` with `imports` beside it and returns what the start threw
 * (`undefined` if it started). The data source is made here, so that it is closed even when the
 * module never finishes compiling.
 */
export async function startupFailure(database: TypeOrmModuleOptions, imports: NonNullable<ModuleMetadata['imports']>): Promise<unknown> {
  let dataSource: DataSource | undefined;
  try {
    const module = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => database,
          dataSourceFactory: async (options) => (dataSource = await new DataSource(options!).initialize()),
        }),
        ...imports,
      ],
    })
      .setLogger(silentLogger)
      .compile();
    module.useLogger(false);
    await module.init().finally(() => module.close());
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await dataSource?.destroy().catch(() => undefined);
  }
}
