import type { Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { OUTBOX_DATA_SOURCE, OUTBOX_EXTRAS } from '../outbox.constants';
import type { ResolvedOutboxExtras } from '../outbox.module-definition';
import { OutboxRegistry } from './outbox-registry';

export const OUTBOX_REGISTRATION = Symbol('outbox:registration');

/** Registers the module's outbox while the app's providers are made, before any of them connects or relays. */
export const outboxRegistrationProvider: Provider = {
  provide: OUTBOX_REGISTRATION,
  inject: [OutboxRegistry, OUTBOX_EXTRAS, OUTBOX_DATA_SOURCE],
  useFactory: (registry: OutboxRegistry, extras: ResolvedOutboxExtras, dataSource: DataSource | null) => registry.register(extras.name, dataSource, extras.dataSource),
};
