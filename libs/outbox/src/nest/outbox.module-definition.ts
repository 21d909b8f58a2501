import { ConfigurableModuleBuilder, type Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DiscoveryModule } from '@nestjs/core';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidOption } from '../core/outbox.messages';
import { validateSchemaName, validateTableName } from '../core/names';
import { DEFAULT_OUTBOX_TABLE, outboxMessageEntity } from '../typeorm/outbox-message.entity';
import { OUTBOX_DATA_SOURCE, OUTBOX_EXTRAS, OUTBOX_OPENED_CONNECTION } from './outbox.constants';
import { resolveConnectionOption, type ConnectionTarget } from '../adapters/connection/outbox-connection.options';
import { connectionWithDataSource } from '../adapters/connection/connection.messages';
import { openConnection, type OpenedConnection } from '../adapters/connection/open-connection';
import { TypeOrmSqlConnection } from '../typeorm/typeorm-sql.connection';
import type { OutboxModuleExtras, OutboxModuleOptions } from './outbox-module.options';

export type ResolvedOutboxExtras = Required<Omit<OutboxModuleExtras, 'dataSource' | 'schema' | 'connection'>> & Pick<OutboxModuleExtras, 'dataSource' | 'schema'>;

export const {
  ConfigurableModuleClass: ConfigurableOutboxModule,
  MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS,
  OPTIONS_TYPE: OUTBOX_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: OUTBOX_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OutboxModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createOutboxOptions')
  // Every extra is listed here, `schema` too although it has no default: Nest takes the listed
  // keys out of the options, in forRoot and next to forRootAsync's factory alike.
  .setExtras<OutboxModuleExtras>({ isGlobal: true, tableName: DEFAULT_OUTBOX_TABLE, schema: undefined, connection: undefined }, (definition, extras) => {
    if (extras.isGlobal !== undefined && typeof extras.isGlobal !== 'boolean') {
      throw new OutboxConfigurationError(invalidOption('isGlobal', 'true or false', extras.isGlobal));
    }
    if (extras.dataSource !== undefined && (typeof extras.dataSource !== 'string' || extras.dataSource === '')) {
      throw new OutboxConfigurationError(invalidOption('dataSource', 'the name of a TypeORM data source (a non-empty string), or no value for the default one', extras.dataSource));
    }
    if (extras.connection !== undefined && extras.dataSource !== undefined) throw new OutboxConfigurationError(connectionWithDataSource(extras.dataSource));
    const target = extras.connection === undefined ? undefined : resolveConnectionOption(extras.connection);
    const resolved: ResolvedOutboxExtras = {
      isGlobal: extras.isGlobal ?? true,
      tableName: validateTableName(extras.tableName ?? DEFAULT_OUTBOX_TABLE),
      schema: validateSchemaName(extras.schema),
      dataSource: extras.dataSource,
    };
    return {
      ...definition,
      global: resolved.isGlobal,
      imports: [...(definition.imports ?? []), DiscoveryModule, ...(target ? [] : [TypeOrmModule.forFeature([outboxMessageEntity(resolved)], resolved.dataSource)])],
      providers: [...(definition.providers ?? []), { provide: OUTBOX_EXTRAS, useValue: resolved }, ...connectionProviders(resolved, target)],
    };
  })
  .build();

/**
 * The data source and the connection the stores run on. With `connection` there is no data source
 * (null: nothing of TypeORM is registered), and the pool is opened when the module is instantiated.
 */
function connectionProviders(resolved: ResolvedOutboxExtras, target: ConnectionTarget | undefined): Provider[] {
  if (target) {
    return [
      { provide: OUTBOX_DATA_SOURCE, useValue: null },
      { provide: OUTBOX_OPENED_CONNECTION, useFactory: (): OpenedConnection => openConnection(target) },
    ];
  }
  return [
    { provide: OUTBOX_DATA_SOURCE, useExisting: getDataSourceToken(resolved.dataSource) },
    {
      provide: OUTBOX_OPENED_CONNECTION,
      inject: [OUTBOX_DATA_SOURCE],
      // The app's data source: TypeORM's module closes it, not this one.
      useFactory: (dataSource: DataSource): OpenedConnection => ({ connection: new TypeOrmSqlConnection(dataSource), close: async () => undefined }),
    },
  ];
}
