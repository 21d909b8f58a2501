import { OUTBOX_OPTION_KEYS, rejectUnknownOptionKeys } from '../../core/option-keys';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { invalidOption } from '../../core/outbox.messages';
import { validateSchemaName, validateTableName } from '../../core/names';
import { resolveOutboxSettings, type ResolvedOutboxSettings } from '../../core/outbox-options';
import { DEFAULT_OUTBOX_TABLE } from '../../sql/dialects/outbox-table';
import { checkTransportOptions } from '../outbox-transports.resolver';
import { tenantsRefuseWal } from '../../adapters/tenants/tenants.messages';
import { resolveMetricsOptions, type ResolvedMetricsOptions } from '../../core/observe/metrics/metrics.options';
import { TENANT_MODULE_KEYS, TENANT_SETTING_KEYS, type OutboxTenantsModuleOptions } from './outbox-tenants.options';

export interface ResolvedTenantsOptions {
  settings: ResolvedOutboxSettings;
  refreshIntervalMs: number;
  poolSize: number;
  maxConcurrentRounds: number;
  connectTimeoutMs: number;
  queryTimeoutMs: number;
  idleTimeoutMs: number;
  table: { tableName: string; schema?: string };
  /** Undefined when metrics are off. */
  metrics?: ResolvedMetricsOptions;
}

const KEYS = { ...OUTBOX_OPTION_KEYS, '': [...TENANT_MODULE_KEYS, ...TENANT_SETTING_KEYS] };

/** Every mistake refused where the module is declared, naming the option. */
export function resolveTenantsOptions(options: OutboxTenantsModuleOptions, relayId: () => string): ResolvedTenantsOptions {
  if (options !== null && typeof options === 'object' && 'delivery' in options) throw new OutboxConfigurationError(tenantsRefuseWal());
  try {
    rejectUnknownOptionKeys(options, KEYS);
  } catch (error) {
    throw error instanceof OutboxConfigurationError ? new OutboxConfigurationError(error.message.replaceAll('OutboxModule', 'OutboxTenantsModule')) : error;
  }
  if (typeof options.tenants !== 'function') fail('tenants', 'a function returning [{ id, url }] (or a promise of it)', options.tenants);
  if (options.transport === undefined || options.transport === null) fail('transport', 'where the relays publish: a ClientsModule token, a ClientProxy or an OutboxTransport', options.transport);
  checkTransportOptions(options);
  const settingsPart = Object.fromEntries(TENANT_SETTING_KEYS.filter((key) => options[key] !== undefined).map((key) => [key, options[key]]));
  // No cleanup runs over tenant databases: a published row is deleted when it is marked published.
  const settings = resolveOutboxSettings({ ...settingsPart, cleanup: { deleteOnPublish: true } }, relayId);
  let metrics: ResolvedMetricsOptions | undefined;
  try {
    metrics = resolveMetricsOptions(options.metrics);
  } catch (error) {
    throw error instanceof OutboxConfigurationError ? new OutboxConfigurationError(error.message.replaceAll('OutboxModule', 'OutboxTenantsModule')) : error;
  }
  return {
    metrics,
    settings,
    refreshIntervalMs: integer('refreshIntervalMs', options.refreshIntervalMs ?? 30_000, 1_000, 3_600_000),
    poolSize: integer('poolSize', options.poolSize ?? 2, 2, 100),
    maxConcurrentRounds: integer('maxConcurrentRounds', options.maxConcurrentRounds ?? 4, 1, 1_000),
    connectTimeoutMs: integer('connectTimeoutMs', options.connectTimeoutMs ?? 5_000, 100, 300_000),
    queryTimeoutMs: integer('queryTimeoutMs', options.queryTimeoutMs ?? 10_000, 100, 300_000),
    idleTimeoutMs: integer('idleTimeoutMs', options.idleTimeoutMs ?? 10_000, 100, 3_600_000),
    table: { tableName: validateTableName(options.tableName ?? DEFAULT_OUTBOX_TABLE), schema: validateSchemaName(options.schema) },
  };
}

function integer(option: string, value: unknown, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) fail(option, `an integer from ${min} to ${max}`, value);
  return value as number;
}

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got).replace('OutboxModule', 'OutboxTenantsModule'));
}
