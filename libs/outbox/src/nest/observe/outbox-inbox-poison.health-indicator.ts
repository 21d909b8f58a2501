import { Injectable } from '@nestjs/common';
import type { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { errorText } from '../../core/error-text';
import { summarizePoison } from '../../core/poison/poison-summary';
import { OutboxInbox } from '../inbox/outbox-inbox';
import { loadOptional } from '../../core/optional-peer';
import { judgeInboxPoison } from '../../core/observe/health/inbox-poison.health';

/**
 * The inbox's `@nestjs/terminus` indicator (from `OutboxInboxModule`): down while poison messages
 * wait set aside, with their count and the oldest's age, per consumer; up with `poison: 'off'`
 * when the policy is off. Failing records (still retried by the broker) keep it up.
 *
 * ```ts
 * check() { return this.health.check([() => this.poison.isHealthy('inbox-poison')]); }
 * ```
 */
@Injectable()
export class OutboxInboxPoisonHealthIndicator {
  private indicators: HealthIndicatorService | undefined;

  constructor(private readonly inbox: OutboxInbox) {}

  /** `maxWaiting`: set-aside messages tolerated before it is down (default `0`). */
  async isHealthy<Key extends string = 'inbox-poison'>(key: Key = 'inbox-poison' as Key, { maxWaiting = 0 }: { maxWaiting?: number } = {}): Promise<HealthIndicatorResult<Key>> {
    this.indicators ??= new (loadOptional<typeof import('@nestjs/terminus')>('@nestjs/terminus', 'OutboxInboxPoisonHealthIndicator').HealthIndicatorService)();
    const indicator = this.indicators.check(key);
    const poison = this.inbox.poison;
    if (!poison) return indicator.up({ poison: 'off' });
    let counts;
    try {
      counts = await poison.counts();
    } catch (error) {
      return indicator.down({ reason: `the poison table cannot be read: ${errorText(error)}` });
    }
    const verdict = judgeInboxPoison(summarizePoison(counts, Date.now()), maxWaiting);
    return verdict.healthy ? indicator.up(verdict.details) : indicator.down({ reason: verdict.reasons.join('; '), ...verdict.details });
  }
}
