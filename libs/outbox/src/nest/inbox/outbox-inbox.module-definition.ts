import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { validateTableName } from '../../core/names';
import { DEFAULT_INBOX_TABLE } from '../../sql/inbox/inbox-sql.dialect';
import { DEFAULT_POISON_TABLE } from '../../sql/poison/poison-sql.dialect';
import type { OutboxInboxModuleExtras, OutboxInboxModuleOptions } from './outbox-inbox.options';

export const INBOX_EXTRAS = Symbol('outbox:inbox-extras');
export const INBOX_DATA_SOURCE = Symbol('outbox:inbox-data-source');

export type ResolvedInboxExtras = { tableName: string; poisonTableName: string; dataSource?: string; isGlobal: boolean };

export const {
  ConfigurableModuleClass: ConfigurableInboxModule,
  MODULE_OPTIONS_TOKEN: INBOX_MODULE_OPTIONS,
} = new ConfigurableModuleBuilder<OutboxInboxModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createInboxOptions')
  .setExtras<OutboxInboxModuleExtras>({ isGlobal: true, tableName: DEFAULT_INBOX_TABLE, poisonTableName: DEFAULT_POISON_TABLE }, (definition, extras) => {
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
        { provide: INBOX_DATA_SOURCE, useExisting: getDataSourceToken(resolved.dataSource) },
      ],
    };
  })
  .build();
