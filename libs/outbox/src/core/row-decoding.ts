import { toOutgoingMessage } from './envelope';
import type { EnvelopeHeaders } from './cloudevents/envelope-options';
import { claimedTooOften, failedTooOften, undecodableRow } from './outbox.messages';
import { ERROR_LIMITS } from './message-limits';
import type { ClaimedMessage, OutgoingMessage } from './outbox-message';

/**
 * Rows are written by this library, but also by hand, by other programs or by a disk that lies.
 * Each claimed row is decoded on its own, so a row that cannot be read is dead-lettered alone
 * with the reason, instead of failing the claim or the publish of its whole batch.
 */
export interface DecodedBatch {
  /** Ready to publish, by position. */
  decoded: Map<string, OutgoingMessage>;
  /** Why a row cannot be published, by position; such a row goes dead at once. */
  undecodable: Map<string, string>;
}

/**
 * `maxAttempts`, when given, also refuses a row claimed more often than that: each earlier claim
 * ended without an outcome (its relay crashed or lost the lease mid-publish), so a row that crashes
 * every relay taking it is dead-lettered alone instead of crashing them for ever.
 */
export function decodeBatch(messages: readonly ClaimedMessage[], maxAttempts?: number, envelopeHeaders?: EnvelopeHeaders): DecodedBatch {
  const batch: DecodedBatch = { decoded: new Map(), undecodable: new Map() };
  for (const message of messages) {
    if (maxAttempts !== undefined && message.attempt > maxAttempts) {
      batch.undecodable.set(message.position, overMaxAttempts(message, maxAttempts));
      continue;
    }
    const reason = message.decodeError ?? metadataProblem(message);
    if (reason !== undefined) {
      batch.undecodable.set(message.position, undecodableRow(message.position, reason.part, reason.cause));
      continue;
    }
    try {
      batch.decoded.set(message.position, toOutgoingMessage(message, envelopeHeaders));
    } catch (error) {
      batch.undecodable.set(message.position, undecodableRow(message.position, 'payload', `is not JSON (${(error as Error).message})`));
    }
  }
  return batch;
}

/**
 * Why a row claimed more often than `maxAttempts` goes dead. Every claim but this one either
 * recorded a failure (in the error history) or ended without an outcome; which of them it was is
 * what an operator needs to know: failures recorded up to the limit mean the limit was lowered
 * since (a restart with a smaller `maxAttempts`), claims without one mean crashes or stalls.
 */
function overMaxAttempts(message: ClaimedMessage, maxAttempts: number): string {
  const history = recordedFailures(message.errorHistory);
  if (!history) return claimedTooOften(message.position, message.attempt, maxAttempts);
  // The history keeps the latest entries only: a full one may stand for more failures.
  const capped = history.count >= ERROR_LIMITS.historyEntries;
  const withoutOutcome = capped ? 0 : Math.max(0, message.attempt - 1 - history.count);
  return failedTooOften(message.position, { failures: history.count, capped, last: history.last, withoutOutcome, attempt: message.attempt, maxAttempts });
}

function recordedFailures(text: string | null | undefined): { count: number; last: string } | undefined {
  if (!text) return undefined;
  try {
    const entries: unknown = JSON.parse(text);
    if (!Array.isArray(entries) || entries.length === 0) return undefined;
    const last = entries[entries.length - 1] as { error?: unknown } | null;
    return { count: entries.length, last: typeof last?.error === 'string' ? last.error : '(not recorded)' };
  } catch {
    // An unreadable history says nothing either way: the claim count is all there is.
    return undefined;
  }
}

export interface DecodeProblem {
  part: string;
  cause: string;
}

/** Parses the stored headers, or says why they are unusable; never throws. */
export function decodeHeaders(text: unknown): { headers: Record<string, string>; problem?: DecodeProblem } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(text));
  } catch (error) {
    return { headers: {}, problem: { part: 'headers', cause: `are not JSON (${(error as Error).message})` } };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { headers: {}, problem: { part: 'headers', cause: 'are not a JSON object' } };
  }
  const wrong = Object.entries(parsed).find(([, value]) => typeof value !== 'string');
  if (wrong) return { headers: {}, problem: { part: 'headers', cause: `hold a value that is not a string (header "${wrong[0]}")` } };
  return { headers: parsed as Record<string, string> };
}

function metadataProblem(message: ClaimedMessage): DecodeProblem | undefined {
  if (!Number.isSafeInteger(message.version)) return { part: 'event version', cause: `is not an integer (${String(message.version)})` };
  for (const field of ['id', 'type', 'aggregateType', 'aggregateId', 'destination'] as const) {
    if (typeof message[field] !== 'string' || message[field] === '') return { part: field, cause: 'is empty' };
  }
  if (typeof message.occurredAt !== 'string' || Number.isNaN(Date.parse(message.occurredAt))) {
    return { part: 'occurred_at', cause: `is not a date (${String(message.occurredAt)})` };
  }
  return undefined;
}
