import { errorText } from '../error-text';
import { handlerFailed } from './poison.messages';
import { escapeControl, keyOfRaw, storedForm } from './poison-decoding';
import type { PoisonRecord, PoisonStore } from './poison.port';
import type { ResolvedPoisonSettings } from './poison-settings';

/**
 * Decides what a failed delivery becomes. Until `maxAttempts` failures the handler's error is
 * rethrown, so the broker redelivers as it would without the policy; the count lives in the
 * store, written outside the handler's rolled-back transaction, so it survives redeliveries,
 * restarts and other instances. At the limit, and at once for a message that cannot be decoded,
 * the message is recorded and the caller acknowledges it.
 */
export class PoisonPolicy<T> {
  constructor(
    readonly store: PoisonStore<T>,
    readonly settings: ResolvedPoisonSettings,
  ) {}

  /** Records a delivery that cannot be decoded; it is set aside at once (no retry can decode it). */
  undecodable(consumer: string, message: unknown, reason: string): Promise<PoisonRecord> {
    const { raw, truncated } = storedForm(message, this.settings.maxStoredChars);
    return this.store.countFailure({ consumer, key: keyOfRaw(raw), raw, truncated, reason: escapeControl(reason) }, 1);
  }

  /**
   * Counts a handler failure. Resolves with the record when the message is now set aside (the
   * caller acknowledges it), `undefined` when the caller must rethrow so the broker redelivers.
   * If the count itself cannot be written (the database is away), the failure is not counted and
   * the caller rethrows: an outage never sets messages aside.
   */
  async failed(consumer: string, messageId: string, message: unknown, error: unknown, setAsideAt = this.settings.maxAttempts): Promise<PoisonRecord | undefined> {
    const { raw, truncated } = storedForm(message, this.settings.maxStoredChars);
    let record: PoisonRecord;
    try {
      record = await this.store.countFailure({ consumer, key: messageId, messageId, raw, truncated, reason: escapeControl(handlerFailed(errorText(error))) }, setAsideAt);
    } catch {
      return undefined;
    }
    return record.state === 'set-aside' ? record : undefined;
  }
}
