import type { OutboxSettings } from '../../core/outbox-settings';
import type { TenantDatabase } from '../../adapters/tenants/tenant-database';
import type { OutboxTransportOption } from '../outbox-module.options';
import type { OutboxMetricsOptions } from '../../core/observe/metrics/metrics.options';

/** The settings a tenant's relay takes; the others (WAL mode, partitions, metrics, …) are those of `OutboxModule`. */
export type TenantRelaySettings = Pick<
  OutboxSettings,
  'pollIntervalMs' | 'batchSize' | 'leaseMs' | 'publishTimeoutMs' | 'maxAttempts' | 'backoff' | 'defaultTopic' | 'resolveTopic' | 'deadLetterPolicy' | 'routes' | 'maxPayloadBytes' | 'enrich' | 'shutdownTimeoutMs' | 'relayId' | 'retryIf' | 'preparedStatements'
>;

/** `OutboxTenantsModule.forRoot(options)`. */
export interface OutboxTenantsModuleOptions extends TenantRelaySettings {
  /**
   * The tenants' databases now, `[{ id, url }]`: read at startup and every `refreshIntervalMs`. A
   * tenant that appears gets a relay; one that goes away has its relay stopped and its pool closed.
   * Required.
   */
  tenants: () => Promise<readonly TenantDatabase[]> | readonly TenantDatabase[];
  /** Where the relays publish, as `OutboxModule`'s `transport`. Required. */
  transport: OutboxTransportOption;
  /** More transports by name, for `routes`. Default: none. */
  transports?: Record<string, OutboxTransportOption>;
  /** How often the list is read again, in ms (1,000 to 3,600,000). Default `30_000`. */
  refreshIntervalMs?: number;
  /** Connections of each tenant's pool (at least 2). Default `2`. */
  poolSize?: number;
  /** Relay rounds (claim → publish → settle) running at once over all tenants, handed out in turn. Default `4`. */
  maxConcurrentRounds?: number;
  /** How long opening a tenant's connection may take before it counts as failing, in ms. Default `5_000`. */
  connectTimeoutMs?: number;
  /**
   * The longest a statement on a tenant's database may wait for its answer, in ms (100 to 300,000): a
   * database that accepts connections and then stops answering fails the statement then, and its
   * connection is closed, instead of holding one of the `maxConcurrentRounds` turns until TCP gives
   * up. Default `10_000`: far above a claim of `batchSize` rows, which takes milliseconds.
   */
  queryTimeoutMs?: number;
  /** A tenant's connections idle this long are closed, in ms: an idle tenant holds none. Default `10_000`. */
  idleTimeoutMs?: number;
  /** The outbox table in every tenant's database. Default `'outbox_messages'`. */
  tableName?: string;
  /** Its PostgreSQL schema. Default: none, the connection's `search_path` decides. */
  schema?: string;
  /**
   * Prometheus metrics with `prom-client` (an optional peer, loaded only when this is set): the
   * outbox metrics of `OutboxModule`'s `metrics` option, per tenant, labelled `outbox="tenants"` and
   * `tenant="<id>"`; a tenant removed from the list takes its series out. On the same registry and
   * prefix as an `OutboxModule`'s metrics, they share the metrics (its series have no `tenant` label).
   * Default: none.
   */
  metrics?: boolean | OutboxMetricsOptions;
  /** Register `OutboxTenants` globally. Default `true`. */
  isGlobal?: boolean;
}

export const TENANT_MODULE_KEYS = [
  'tenants', 'transport', 'transports', 'refreshIntervalMs', 'poolSize', 'maxConcurrentRounds', 'connectTimeoutMs', 'queryTimeoutMs', 'idleTimeoutMs', 'tableName', 'schema', 'metrics', 'isGlobal',
] as const;
export const TENANT_SETTING_KEYS = [
  'pollIntervalMs', 'batchSize', 'leaseMs', 'publishTimeoutMs', 'maxAttempts', 'backoff', 'defaultTopic', 'resolveTopic', 'deadLetterPolicy', 'routes', 'maxPayloadBytes',
  'enrich', 'shutdownTimeoutMs', 'relayId', 'retryIf', 'preparedStatements',
] as const;

// Every option of the interface is listed, so the unknown-key check knows it.
type Unlisted = Exclude<keyof OutboxTenantsModuleOptions, (typeof TENANT_MODULE_KEYS)[number] | (typeof TENANT_SETTING_KEYS)[number]>;
const everyOptionIsListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyOptionIsListed;

export const OUTBOX_TENANTS_OPTIONS = Symbol('outbox:tenants-options');
