import { Inject, Injectable } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import type { ResolvedObservability } from '../../core/observe/observability.options';
import type { DeliveryStream, StreamHealthThresholds } from '../../core/stream/delivery-stream.port';
import { OUTBOX_OBSERVABILITY, OUTBOX_STREAM } from '../outbox.constants';
import { loadOptional } from '../../core/optional-peer';

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
  ) {}

  async isHealthy<Key extends string = 'outbox-wal'>(key: Key = 'outbox-wal' as Key, thresholds: Partial<StreamHealthThresholds> = {}): Promise<HealthIndicatorResult<Key>> {
    this.indicators ??= new (loadOptional<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'OutboxWalHealthIndicator').HealthIndicatorService)();
    const indicator = this.indicators.check(key);
    if (!this.stream) return indicator.up({ delivery: 'table' });
    // The stream judges its own source; the module's health.maxLagMs unless the caller gives its own.
    const verdict = await this.stream.health({
      maxRetainedBytes: thresholds.maxRetainedBytes,
      maxLagMs: thresholds.maxLagMs !== undefined ? thresholds.maxLagMs : this.observability.health.maxLagMs,
    });
    return verdict.healthy ? indicator.up(verdict.details) : indicator.down({ reason: verdict.reasons.join('; '), ...verdict.details });
  }
}
