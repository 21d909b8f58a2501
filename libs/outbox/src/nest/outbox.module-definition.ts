import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidOption } from '../core/outbox.messages';
import { validateSchemaName, validateTableName } from '../core/names';
import { outboxMessageEntity } from '../typeorm/outbox-message.entity';
import { DEFAULT_OUTBOX_TABLE } from '../sql/dialects/outbox-table';
import { loadTypeOrmMode } from './typeorm-mode.loader';
import { OUTBOX_DATA_SOURCE, OUTBOX_EXTRAS, OUTBOX_OPENED_CONNECTION } from './outbox.constants';
import { resolveConnectionOption } from '../adapters/connection/outbox-connection.options';
import { connectionWithDataSource } from '../adapters/connection/connection.messages';
import { connectionProviders } from './connection.providers';
import { validateOutboxName } from '../core/outbox-name';
import { OutboxRegistryModule } from './named/outbox-registry';
import type { OutboxModuleExtras, OutboxModuleOptions } from './outbox-module.options';

export type ResolvedOutboxExtras = Required<Omit<OutboxModuleExtras, 'dataSource' | 'schema' | 'connection' | 'name'>> & Pick<OutboxModuleExtras, 'dataSource' | 'schema' | 'name'>;

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
  .setExtras<OutboxModuleExtras>({ isGlobal: true, tableName: DEFAULT_OUTBOX_TABLE, schema: undefined, connection: undefined, name: undefined }, (definition, extras) => {
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
      name: validateOutboxName(extras.name),
    };
    // Without `connection` the app has chosen TypeORM: only then are typeorm and @nestjs/typeorm loaded.
    const typeOrmFeature = target ? [] : [loadTypeOrmMode('OutboxModule').TypeOrmModule.forFeature([outboxMessageEntity(resolved)], resolved.dataSource)];
    return {
      ...definition,
      global: resolved.isGlobal,
      imports: [...(definition.imports ?? []), DiscoveryModule, OutboxRegistryModule, ...typeOrmFeature],
      providers: [...(definition.providers ?? []), { provide: OUTBOX_EXTRAS, useValue: resolved }, ...connectionProviders('OutboxModule', { dataSource: OUTBOX_DATA_SOURCE, connection: OUTBOX_OPENED_CONNECTION }, resolved.dataSource, target)],
    };
  })
  .build();

