import { Inject, Injectable } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import type { ResolvedObservability } from '../../core/observe/observability.options';
import type { ResolvedOutboxSettings } from '../../core/outbox-options';
import { errorText } from '../../core/error-text';
import { WAL_DEFAULTS } from '../../core/stream/wal-options';
import type { DeliveryStream } from '../../core/stream/delivery-stream.port';
import { OUTBOX_OBSERVABILITY, OUTBOX_SETTINGS, OUTBOX_STREAM } from '../outbox.constants';
import { loadOptional } from '../../core/optional-peer';
import { judgeWalSlot, type WalHealthThresholds } from '../../wal/wal-slot.health';

/**
 * The WAL delivery mode's `@nestjs/terminus` indicator: down when this database's slot is missing,
 * invalidated or another database's, when no instance streams it, when it retains more than
 * `wal.maxRetainedBytes`, when the stream confirms later than `health.maxLagMs`, or after a slot
 * was made anew over one whose events may be lost. Up, with nothing to say, in the table mode.
 *
 * ```ts
 * check() { return this.health.check([() => this.outbox.isHealthy(), () => this.wal.isHealthy('outbox-wal')]); }
 * ```
 */
@Injectable()
export class OutboxWalHealthIndicator {
  private indicators: HealthIndicatorService | undefined;

  constructor(
    @Inject(OUTBOX_STREAM) private readonly stream: DeliveryStream | null,
    @Inject(OUTBOX_OBSERVABILITY) private readonly observability: ResolvedObservability,
    @Inject(OUTBOX_SETTINGS) private readonly settings: ResolvedOutboxSettings,
  ) {}

  async isHealthy<Key extends string = 'outbox-wal'>(key: Key = 'outbox-wal' as Key, thresholds: Partial<WalHealthThresholds> = {}): Promise<HealthIndicatorResult<Key>> {
    this.indicators ??= new (loadOptional<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'OutboxWalHealthIndicator').HealthIndicatorService)();
    const indicator = this.indicators.check(key);
    if (!this.stream) return indicator.up({ delivery: 'table' });
    const slot = this.stream.source;
    let lag;
    try {
      lag = await this.stream.lag();
    } catch (error) {
      return indicator.down({ reason: `the replication slot cannot be read: ${errorText(error)}` });
    }
    const verdict = judgeWalSlot(slot.slotName, lag, {
      maxRetainedBytes: thresholds.maxRetainedBytes !== undefined ? thresholds.maxRetainedBytes : (this.settings.wal.maxRetainedBytes ?? WAL_DEFAULTS.maxRetainedBytes),
      maxLagMs: thresholds.maxLagMs !== undefined ? thresholds.maxLagMs : this.observability.health.maxLagMs,
    }, this.stream.incident, this.stream.waitingSince === undefined ? undefined : Date.now() - this.stream.waitingSince);
    return verdict.healthy ? indicator.up(verdict.details) : indicator.down({ reason: verdict.reasons.join('; '), ...verdict.details });
  }
}
