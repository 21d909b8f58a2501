import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { validateTableName } from '../../core/names';
import { DEFAULT_INBOX_TABLE } from '../../sql/inbox/inbox-sql.dialect';
import { DEFAULT_POISON_TABLE } from '../../sql/poison/poison-sql.dialect';
import type { OutboxInboxModuleExtras, OutboxInboxModuleOptions } from './outbox-inbox.options';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { inboxConnectionWithDataSource } from '../../core/inbox/inbox.messages';
import { resolveConnectionOption } from '../../adapters/connection/outbox-connection.options';
import { connectionProviders } from '../connection.providers';

export const INBOX_EXTRAS = Symbol('outbox:inbox-extras');
export const INBOX_DATA_SOURCE = Symbol('outbox:inbox-data-source');
/** The inbox's `SqlConnection` with how to close it: TypeORM's data source, or the module's own `connection`. */
export const INBOX_CONNECTION = Symbol('outbox:inbox-connection');

export type ResolvedInboxExtras = { tableName: string; poisonTableName: string; dataSource?: string; isGlobal: boolean };

export const {
  ConfigurableModuleClass: ConfigurableInboxModule,
  MODULE_OPTIONS_TOKEN: INBOX_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<OutboxInboxModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createInboxOptions')
  .setExtras<OutboxInboxModuleExtras>({ isGlobal: true, tableName: DEFAULT_INBOX_TABLE, poisonTableName: DEFAULT_POISON_TABLE, connection: undefined }, (definition, extras) => {
    if (extras.connection !== undefined && extras.dataSource !== undefined) throw new OutboxConfigurationError(inboxConnectionWithDataSource(extras.dataSource));
    const target = extras.connection === undefined ? undefined : resolveConnectionOption(extras.connection);
    const resolved: ResolvedInboxExtras = {
      isGlobal: extras.isGlobal ?? true,
      tableName: validateTableName(extras.tableName ?? DEFAULT_INBOX_TABLE),
      poisonTableName: validateTableName(extras.poisonTableName ?? DEFAULT_POISON_TABLE),
      dataSource: extras.dataSource,
    };
    return {
      ...definition,
      global: resolved.isGlobal,
      imports: [...(definition.imports ?? []), DiscoveryModule],
      providers: [
        ...(definition.providers ?? []),
        { provide: INBOX_EXTRAS, useValue: resolved },
        ...connectionProviders('OutboxInboxModule', { dataSource: INBOX_DATA_SOURCE, connection: INBOX_CONNECTION }, resolved.dataSource, target),
      ],
    };
  })
  .build();

