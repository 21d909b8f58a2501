import { NOT_SENT, type SendResult } from '../batch-runs';
import type { ClaimedMessage } from '../outbox-message';
import type { MessageOutcome } from '../observe/relay-observer';

/**
 * One attempt's outcomes, as observers (metrics) take them from the table relay after its settle:
 * the acknowledged messages, and the failed ones with the delay before the stream tries again (a
 * failed message is never dead in the stream: it is tried again or moved to the table). Messages
 * not sent (behind a failed one of their aggregate) are left out.
 */
export function attemptOutcomes(claimed: readonly ClaimedMessage[], results: readonly SendResult[], durations: readonly number[], retryInMs: number): MessageOutcome[] {
  const outcomes: MessageOutcome[] = [];
  claimed.forEach((message, index) => {
    const result = results[index];
    if (result === NOT_SENT) return;
    outcomes.push(result === undefined ? { message, durationMs: durations[index] } : { message, error: result.text, retryInMs, durationMs: durations[index] });
  });
  return outcomes;
}
