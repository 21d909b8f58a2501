import type { Type } from '@nestjs/common';
import type { ClientProxy } from '@nestjs/microservices';
import type { OutboxSettings } from '../core/outbox-options';
import type { OutboxTransport } from '../core/outbox-transport.port';
import type { OUTBOX_OPTION_KEYS } from '../core/option-keys';
import type { OutboxMetricsOptions } from '../core/observe/metrics/metrics.options';
import type { OutboxTracingOptions } from '../core/observe/tracing/tracing.options';
import type { OutboxRelayStart } from './outbox-relay.start';
import type { OutboxConnectionOptions } from '../adapters/connection/outbox-connection.options';
import type { AsyncApiOptions } from '../core/asyncapi/asyncapi-options';
import type { SchemaRegistryOptions } from '../core/schema-registry/schema-registry.options';

export type OutboxTransportOption = string | symbol | Type<unknown> | ClientProxy | OutboxTransport;

export interface OutboxModuleOptions extends OutboxSettings {
  /**
   * Where the relay publishes: the injection token of a `ClientsModule` client (e.g. `'KAFKA'`)
   * or of a provider implementing `OutboxTransport`, a `ClientProxy`, or an `OutboxTransport`
   * object. Required unless `relay` is `false`.
   */
  transport?: OutboxTransportOption;
  /** More transports by name, for `routes` (e.g. `{ partner: 'PARTNER_RMQ' }`). Default: none. */
  transports?: Record<string, OutboxTransportOption>;
  /**
   * Prometheus metrics with `prom-client` (an optional peer dependency, loaded only when this is
   * set): `true` for the global registry, or `{ registry, prefix, latencyBuckets }`. Default `false`.
   */
  metrics?: boolean | OutboxMetricsOptions;
  /**
   * OpenTelemetry tracing with `@opentelemetry/api` (an optional peer dependency, loaded only when
   * this is set): the active context is captured at write time, each publish gets a span and
   * `traceparent`/`tracestate` headers. Default `false`.
   */
  tracing?: boolean | OutboxTracingOptions;
  /**
   * When the relay starts claiming. `'bootstrap'`: at `onApplicationBootstrap` (`app.init()`, or
   * the init inside `app.listen()`), before the app's own listeners are up. `'listen'`: when the
   * HTTP server listens (an app without one fails at startup); start connected microservices first
   * (`await app.startAllMicroservices(); await app.listen(port)`). `'manual'`: when the app calls
   * `OutboxRelayHost.start()`. Choose `'listen'` or `'manual'` when the relay publishes to a
   * listener of the same app (TCP to itself): started earlier, every restart charges pending rows a
   * refused attempt. Default `'bootstrap'`.
   */
  relayStart?: OutboxRelayStart;
  /**
   * What the AsyncAPI document (`OutboxAsyncApi`, the console's `api/asyncapi.json`, `nest-outbox asyncapi`)
   * says of the app: `{ title?, version?, description?, servers? }`. Default: title, version and
   * description from the app's package.json, no servers.
   */
  asyncApi?: AsyncApiOptions;
  /**
   * Kafka messages in the Confluent wire format, through a Schema Registry (`@confluentinc/schemaregistry`,
   * an optional peer, loaded only when this is set): each event with a schema (`@OutboxEvent({ schema })`
   * or `events`) is registered at startup after a compatibility check, its payload is checked against
   * it at save, and its Kafka records carry the encoded payload. See docs/schema-registry.md. Default: none.
   */
  schemaRegistry?: SchemaRegistryOptions;
}

/** Options fixed when the module is declared, because they decide which providers exist. */
export interface OutboxModuleExtras {
  /** Name of the outbox table; letters, digits and `_` only. Default `'outbox_messages'`. */
  tableName?: string;
  /**
   * PostgreSQL schema of the outbox table and of its paused-destinations table; letters, digits
   * and `_` only. Run the migration for the same place: `createOutboxTableMigration({ tableName, schema })`.
   * PostgreSQL only (on MariaDB/MySQL, choose the database in the DataSource instead).
   * Default: none, the connection's `search_path` decides.
   */
  schema?: string;
  /** Name of the TypeORM data source that holds the outbox table. Default: the default data source. */
  dataSource?: string;
  /**
   * Without TypeORM: the database the relay, cleanup, stats, console and WAL stream run on, as
   * `{ url }` (the module opens a pool, closes it at shutdown) or `{ pool }` (a pg Pool or mysql2
   * pool of yours). Events are then added with `OutboxPublisher.add(tx, …)` in your data layer's
   * transaction; `@PublishesEvents` aggregates are not captured. Excludes `dataSource`.
   * Default: none, the module works on the TypeORM data source.
   */
  connection?: OutboxConnectionOptions;
  /**
   * The outbox's name, for an app that declares several (one per database, schema or table): its
   * providers are then injected by name, `@InjectOutbox(OutboxPublisher, 'orders_eu')`, metrics
   * carry it as the `outbox` label, and the default replication slot contains it. A lower case
   * letter, then up to 31 lower case letters, digits or `_`. Default: none, the providers are
   * injected by their classes and the `outbox` label reads `default`.
   */
  name?: string;
  /** Register the module globally, so `OutboxPublisher` can be injected anywhere. Default `true`. */
  isGlobal?: boolean;
}

// Unknown option keys are refused at startup; an option missing from OUTBOX_OPTION_KEYS would be
// refused too, so adding one to these interfaces without listing it fails to compile here.
type UnlistedOption = Exclude<keyof (OutboxModuleOptions & OutboxModuleExtras), (typeof OUTBOX_OPTION_KEYS)[''][number]>;
const everyOptionIsListed: [UnlistedOption] extends [never] ? true : UnlistedOption = true;
void everyOptionIsListed;
