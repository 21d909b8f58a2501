import { Inject, Injectable } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { resolveObservability, type HealthThresholds, type ResolvedObservability } from '../../core/observe/observability.options';
import type { ResolvedOutboxSettings } from '../../core/outbox-options';
import { errorText } from '../../core/error-text';
import { OutboxStats } from './outbox.stats';
import { OUTBOX_OBSERVABILITY, OUTBOX_SETTINGS } from '../outbox.constants';
import { loadOptional } from '../../core/optional-peer';
import { judgeOutboxHealth } from '../../core/observe/health/outbox-health.check';
import { leavePausedOut } from '../../core/observe/health/paused-destinations.health';

/**
 * A `@nestjs/terminus` health indicator (terminus is an optional peer, loaded on first use):
 * down when the lag or the dead rows pass their thresholds (`health` option), or when this
 * instance's relay has stalled while rows are pending; the reason is in the response. Paused
 * destinations are listed under `paused` with the reason given at pause time, and left out of the
 * lag (an operator holds them back on purpose).
 *
 * ```ts
 * @Get('health') @HealthCheck()
 * check() { return this.health.check([() => this.outbox.isHealthy('outbox')]); }
 * ```
 */
@Injectable()
export class OutboxHealthIndicator {
  private indicators: HealthIndicatorService | undefined;
  private readonly startedAt = Date.now();

  constructor(
    private readonly stats: OutboxStats,
    @Inject(OUTBOX_OBSERVABILITY) private readonly observability: ResolvedObservability,
    @Inject(OUTBOX_SETTINGS) private readonly settings: ResolvedOutboxSettings,
  ) {}

  /** `thresholds` override the module's `health` option for this check (validated the same way). */
  async isHealthy<Key extends string = 'outbox'>(key: Key = 'outbox' as Key, thresholds?: HealthThresholds): Promise<HealthIndicatorResult<Key>> {
    this.indicators ??= new (loadOptional<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'OutboxHealthIndicator').HealthIndicatorService)();
    const indicator = this.indicators.check(key);
    const limits = thresholds ? resolveObservability({ health: { ...this.observability.health, ...thresholds } }, this.settings).health : this.observability.health;
    let snapshot;
    try {
      snapshot = await this.stats.snapshot();
    } catch (error) {
      return indicator.down({ reason: `the outbox table cannot be read: ${errorText(error)}` });
    }
    const { judged, paused } = leavePausedOut(snapshot);
    const verdict = judgeOutboxHealth(judged, limits, Date.now(), this.startedAt);
    return verdict.healthy ? indicator.up({ ...verdict.details, paused }) : indicator.down({ reason: verdict.reasons.join('; '), ...verdict.details, paused });
  }
}
