import type { ClientProxy } from '@nestjs/microservices';
import type { OutboxSettings } from '../core/outbox-options';
import type { OutboxTransport } from '../core/outbox-transport.port';

export interface OutboxModuleOptions extends OutboxSettings {
  /**
   * Where the relay publishes: the token of a `ClientsModule` client (e.g. `'KAFKA'`), a
   * `ClientProxy`, or an `OutboxTransport` of your own. Required unless `relay` is `false`.
   */
  transport?: string | symbol | ClientProxy | OutboxTransport;
}

/** Options fixed when the module is declared, because they decide which providers exist. */
export interface OutboxModuleExtras {
  /** Name of the outbox table; letters, digits and `_` only. Default `'outbox_messages'`. */
  tableName?: string;
  /** Name of the TypeORM data source that holds the outbox table. Default: the default data source. */
  dataSource?: string;
  /** Register the module globally, so `OutboxPublisher` can be injected anywhere. Default `true`. */
  isGlobal?: boolean;
}
