import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { getDataSourceToken, TypeOrmModule } from '@nestjs/typeorm';
import { validateTableName } from '../core/outbox-options';
import { DEFAULT_OUTBOX_TABLE, outboxMessageEntity } from '../typeorm/outbox-message.entity';
import { OUTBOX_DATA_SOURCE, OUTBOX_EXTRAS } from './outbox.constants';
import type { OutboxModuleExtras, OutboxModuleOptions } from './outbox-module.options';

export type ResolvedOutboxExtras = Required<Omit<OutboxModuleExtras, 'dataSource'>> & Pick<OutboxModuleExtras, 'dataSource'>;

export const {
  ConfigurableModuleClass: ConfigurableOutboxModule,
  MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS,
  OPTIONS_TYPE: OUTBOX_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: OUTBOX_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OutboxModuleOptions>()
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createOutboxOptions')
  .setExtras<OutboxModuleExtras>({ isGlobal: true, tableName: DEFAULT_OUTBOX_TABLE }, (definition, extras) => {
    const resolved: ResolvedOutboxExtras = {
      isGlobal: extras.isGlobal ?? true,
      tableName: validateTableName(extras.tableName ?? DEFAULT_OUTBOX_TABLE),
      dataSource: extras.dataSource,
    };
    return {
      ...definition,
      global: resolved.isGlobal,
      imports: [
        ...(definition.imports ?? []),
        DiscoveryModule,
        TypeOrmModule.forFeature([outboxMessageEntity(resolved.tableName)], resolved.dataSource),
      ],
      providers: [
        ...(definition.providers ?? []),
        { provide: OUTBOX_EXTRAS, useValue: resolved },
        { provide: OUTBOX_DATA_SOURCE, useExisting: getDataSourceToken(resolved.dataSource) },
      ],
    };
  })
  .build();
