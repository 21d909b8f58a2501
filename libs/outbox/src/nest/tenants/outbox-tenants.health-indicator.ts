import { Injectable } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { loadOptional } from '../../core/optional-peer';
import { judgeTenants } from '../../core/observe/health/tenants.health';
import { OutboxTenants } from './outbox-tenants';

const DEFAULT_MAX_FAILING_MS = 60_000;

/**
 * The tenant outboxes' `@nestjs/terminus` indicator (from `OutboxTenantsModule`; terminus is an
 * optional peer, loaded on first use): down while a tenant has been failing for longer than
 * `maxFailingMs` — it could not be opened, or its relay has completed no round since — naming the
 * tenant and the error; shorter failures are listed under `failing` with the check up.
 *
 * ```ts
 * check() { return this.health.check([() => this.tenants.isHealthy('tenants')]); }
 * ```
 */
@Injectable()
export class OutboxTenantsHealthIndicator {
  private indicators: HealthIndicatorService | undefined;

  constructor(private readonly tenants: OutboxTenants) {}

  /** `maxFailingMs`: how long a tenant may fail before the check is down, in ms (default `60_000`). */
  async isHealthy<Key extends string = 'tenants'>(key: Key = 'tenants' as Key, { maxFailingMs = DEFAULT_MAX_FAILING_MS }: { maxFailingMs?: number } = {}): Promise<HealthIndicatorResult<Key>> {
    if (!Number.isFinite(maxFailingMs) || maxFailingMs < 0) {
      throw new RangeError(`OutboxTenantsHealthIndicator.isHealthy: maxFailingMs must be a number of milliseconds ≥ 0, got ${String(maxFailingMs)}.`);
    }
    this.indicators ??= new (loadOptional<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'OutboxTenantsHealthIndicator').HealthIndicatorService)();
    const indicator = this.indicators.check(key);
    const verdict = judgeTenants(this.tenants.status(), maxFailingMs, Date.now());
    return verdict.healthy ? indicator.up(verdict.details) : indicator.down({ reason: verdict.reasons.join('; '), ...verdict.details });
  }
}
