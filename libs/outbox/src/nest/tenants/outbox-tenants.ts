import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { toSqlTransaction, type OutboxDataLayerTransaction } from '../../adapters/data-layer-transaction';
import { OutboxMessageFactory } from '../../core/outbox-message.factory';
import type { OutboxMessageInput } from '../../core/outbox-message-input';
import { RoundTurns } from '../../core/round-turns';
import type { OutboxStatsSnapshot } from '../../core/stats/outbox-stats';
import { TenantOutboxes, type TenantStatus } from '../../adapters/tenants/tenant-outboxes';
import type * as PromClient from 'prom-client';
import { loadOptional } from '../../core/optional-peer';
import { OutboxMetrics } from '../../core/observe/metrics/outbox-metrics';
import { defaultRelayId } from '../outbox-relay.host';
import { resolveTransports } from '../outbox-transports.resolver';
import type { OutboxModuleOptions } from '../outbox-module.options';
import { resolveTenantsOptions, type ResolvedTenantsOptions } from './outbox-tenants.checks';
import { OUTBOX_TENANTS_OPTIONS, type OutboxTenantsModuleOptions } from './outbox-tenants.options';
import type { TenantConsoleParts, TenantOutboxShared } from '../../adapters/tenants/tenant-outbox';

/** The `outbox` label of every tenant's series; `tenant` tells them apart. */
export const TENANT_METRICS_OUTBOX = 'tenants';

/**
 * The outboxes of the tenants' databases: `add(tenantId, tx, messages)` writes in a tenant's
 * transaction; every tenant's relay publishes from its own table, taking rounds in turn with the
 * others. Tenants come and go with what the `tenants` option returns, without a restart.
 */
@Injectable()
export class OutboxTenants implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Outbox');
  private resolved: ResolvedTenantsOptions | undefined;
  private runtime: TenantOutboxes | undefined;

  constructor(
    @Inject(OUTBOX_TENANTS_OPTIONS) private readonly options: OutboxTenantsModuleOptions,
    private readonly moduleRef: ModuleRef,
  ) {}

  onModuleInit(): void {
    this.resolved = resolveTenantsOptions(this.options, defaultRelayId);
  }

  // At bootstrap, when every module's providers exist: the transports are looked up then.
  async onApplicationBootstrap(): Promise<void> {
    const resolved = this.resolved ?? resolveTenantsOptions(this.options, defaultRelayId);
    const { settings } = resolved;
    this.runtime = new TenantOutboxes({
      list: this.options.tenants,
      refreshIntervalMs: resolved.refreshIntervalMs,
      poolSize: resolved.poolSize,
      closeTimeoutMs: settings.shutdownTimeoutMs,
      shared: {
        settings,
        table: resolved.table,
        transports: resolveTransports(this.options as OutboxModuleOptions, this.moduleRef),
        turns: new RoundTurns(resolved.maxConcurrentRounds),
        factory: new OutboxMessageFactory(settings),
        connectTimeoutMs: resolved.connectTimeoutMs,
        queryTimeoutMs: resolved.queryTimeoutMs,
        idleTimeoutMs: resolved.idleTimeoutMs,
        statsRefreshIntervalMs: 5_000,
        logger: this.logger,
        metrics: this.metricsPerTenant(resolved),
      },
    });
    await this.runtime.start();
    this.logger.log(`Tenant outboxes: ${describe(this.runtime.status())}; the list is read again every ${resolved.refreshIntervalMs} ms.`);
  }

  async beforeApplicationShutdown(): Promise<void> {
    const runtime = this.runtime;
    this.runtime = undefined;
    await runtime?.stop();
  }

  /**
   * Adds messages in a transaction on the tenant's database (a node-postgres client after BEGIN, a
   * Kysely, Drizzle, Prisma or MikroORM transaction, or a `SqlTransaction`); they commit or roll
   * back with it. Rejects, writing nothing, for a tenant the list does not have or whose outbox is not open.
   */
  async add(tenantId: string, transaction: OutboxDataLayerTransaction, messages: OutboxMessageInput | OutboxMessageInput[]): Promise<string[]> {
    // The tenant first: an unknown or closed one is the mistake to name, whatever was passed.
    const outbox = this.started().outbox(tenantId);
    return outbox.add(toSqlTransaction(transaction), messages);
  }

  /** Publishes the tenant's claimable rows now; call it after the commit to skip the wait for the next poll. */
  wake(tenantId: string): Promise<void> {
    return this.started().outbox(tenantId).wake();
  }

  /** Reads the tenants' list now and applies it (a tenant just created need not wait for the next refresh). */
  refresh(): Promise<void> {
    return this.started().refresh();
  }

  /** Each tenant: open, or failing with why (tried again at each refresh). */
  status(): TenantStatus[] {
    return this.runtime?.status() ?? [];
  }

  /** The operator console's view of one tenant's table (`OutboxConsoleModule.forRoot({ tenants: true })`). */
  console(tenantId: string): TenantConsoleParts {
    return this.started().outbox(tenantId).console();
  }

  /** The stats of one tenant's outbox table and relay. */
  stats(tenantId: string, options?: { fresh?: boolean }): Promise<OutboxStatsSnapshot> {
    return this.started().outbox(tenantId).snapshot(options);
  }

  /** Every tenant's series carry `outbox="tenants"` and `tenant="<id>"`: one alert per tenant from the shipped rules. */
  private metricsPerTenant({ metrics }: ResolvedTenantsOptions): TenantOutboxShared['metrics'] {
    if (!metrics) return undefined;
    const prom = loadOptional<typeof PromClient>('prom-client', 'metrics');
    return (tenantId, sources) => new OutboxMetrics(prom, metrics, sources, Date.now, TENANT_METRICS_OUTBOX, tenantId);
  }

  private started(): TenantOutboxes {
    if (!this.runtime) throw new Error('OutboxTenants is used before the application bootstrapped (app.init() or app.listen()), or after it shut down.');
    return this.runtime;
  }
}

function describe(status: TenantStatus[]): string {
  const failing = status.filter((tenant) => tenant.state === 'failing');
  return `${status.filter((tenant) => tenant.state === 'open').length} open${failing.length > 0 ? `, ${failing.length} failing (${failing.map((tenant) => tenant.id).join(', ')})` : ''}`;
}
