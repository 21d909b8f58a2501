import type { OutgoingMessage } from '../core/outbox-message';
import type { RecordingOutboxTransport } from './recording-outbox.transport';

export interface PublishedMatch {
  /** Event type, e.g. `orders.order-placed`. */
  type: string;
  aggregateId?: string;
  destination?: string;
  /** Fields the payload must contain (compared as JSON, deeply). */
  payload?: Record<string, unknown>;
}

/** The published messages matching `match`, oldest first. */
export function findPublished(transport: RecordingOutboxTransport, match: PublishedMatch): OutgoingMessage[] {
  return transport.published.filter((message) => matches(message, match));
}

/**
 * Asserts that an event matching `match` was published (exactly `times` times when given) and
 * returns the first such message. Throws an Error listing what was published otherwise, so it
 * works under any test runner.
 */
export function expectPublished(transport: RecordingOutboxTransport, match: PublishedMatch, times?: number): OutgoingMessage {
  const found = findPublished(transport, match);
  if (found.length > 0 && (times === undefined || found.length === times)) return found[0];
  const seen = transport.published.map((message) => `  ${message.envelope.type} ${message.envelope.aggregateId} → ${message.destination}`);
  const wanted = times === undefined ? 'at least once' : `${times} time(s)`;
  throw new Error(
    `Expected ${JSON.stringify(match)} to be published ${wanted}, found ${found.length}. Published:\n${seen.join('\n') || '  (nothing)'}`,
  );
}

/** Asserts that no event matching `match` was published. */
export function expectNotPublished(transport: RecordingOutboxTransport, match: PublishedMatch): void {
  const found = findPublished(transport, match);
  if (found.length > 0) throw new Error(`Expected ${JSON.stringify(match)} not to be published, found ${found.length}.`);
}

function matches(message: OutgoingMessage, match: PublishedMatch): boolean {
  const { envelope } = message;
  if (envelope.type !== match.type) return false;
  if (match.aggregateId !== undefined && envelope.aggregateId !== match.aggregateId) return false;
  if (match.destination !== undefined && message.destination !== match.destination) return false;
  if (match.payload === undefined) return true;
  const payload = envelope.payload as Record<string, unknown> | undefined;
  return Object.entries(match.payload).every(([key, value]) => JSON.stringify(payload?.[key]) === JSON.stringify(value));
}
