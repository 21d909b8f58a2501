import type { ClaimedMessage, OutboxEnvelope, OutgoingMessage } from './outbox-message';
import type { EnvelopeHeaders } from './cloudevents/envelope-options';

/** Header names used on brokers that carry headers. Stable: consumers filter on them. */
export const ENVELOPE_HEADERS = {
  id: 'outbox-message-id',
  type: 'outbox-event-type',
  version: 'outbox-event-version',
  aggregateType: 'outbox-aggregate-type',
  aggregateId: 'outbox-aggregate-id',
  occurredAt: 'outbox-occurred-at',
  correlationId: 'outbox-correlation-id',
  causationId: 'outbox-causation-id',
  tenantId: 'outbox-tenant-id',
} as const;

export function toEnvelope(message: ClaimedMessage): OutboxEnvelope {
  return {
    id: message.id,
    type: message.type,
    version: message.version,
    aggregateType: message.aggregateType,
    aggregateId: message.aggregateId,
    occurredAt: message.occurredAt,
    correlationId: message.correlationId,
    causationId: message.causationId,
    tenantId: message.tenantId,
    headers: message.headers,
    payload: JSON.parse(message.payloadJson),
  };
}

/** The message as transports take it; `envelopeHeaders`: which envelope fields also go as `outbox-*` headers (default all). */
export function toOutgoingMessage(message: ClaimedMessage, envelopeHeaders: EnvelopeHeaders = 'all'): OutgoingMessage {
  const envelope = toEnvelope(message);
  if (envelopeHeaders !== 'all') {
    const headers: Record<string, string> = { ...envelope.headers };
    if (envelopeHeaders === 'id-and-type') {
      headers[ENVELOPE_HEADERS.id] = envelope.id;
      headers[ENVELOPE_HEADERS.type] = envelope.type;
    }
    return { destination: message.destination, key: message.aggregateId, headers, envelope };
  }
  const headers: Record<string, string> = {
    ...envelope.headers,
    [ENVELOPE_HEADERS.id]: envelope.id,
    [ENVELOPE_HEADERS.type]: envelope.type,
    [ENVELOPE_HEADERS.version]: String(envelope.version),
    [ENVELOPE_HEADERS.aggregateType]: envelope.aggregateType,
    [ENVELOPE_HEADERS.aggregateId]: envelope.aggregateId,
    [ENVELOPE_HEADERS.occurredAt]: envelope.occurredAt,
  };
  if (envelope.correlationId) headers[ENVELOPE_HEADERS.correlationId] = envelope.correlationId;
  if (envelope.causationId) headers[ENVELOPE_HEADERS.causationId] = envelope.causationId;
  if (envelope.tenantId) headers[ENVELOPE_HEADERS.tenantId] = envelope.tenantId;
  return { destination: message.destination, key: message.aggregateId, headers, envelope };
}
