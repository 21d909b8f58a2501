import type { ClaimedMessage } from '../outbox-message';
import { formatLsn, type StreamMessage } from './stream-message';

/**
 * A streamed message as the batch publisher takes a claimed row. It has no row: its position names
 * the commit and the index within it. Field by field, once per event on the stream's one thread (see
 * decodeWalRecord); the commit's position formatted once per commit.
 */
export function asClaimed(message: StreamMessage, attempt: number): ClaimedMessage {
  return {
    id: message.id,
    type: message.type,
    version: message.version,
    aggregateType: message.aggregateType,
    aggregateId: message.aggregateId,
    transport: message.transport,
    destination: message.destination,
    occurredAt: message.occurredAt,
    correlationId: message.correlationId,
    causationId: message.causationId,
    tenantId: message.tenantId,
    headers: message.headers,
    payloadJson: message.payloadJson,
    position: `${commitPosition(message.commit)}#${message.index}`,
    attempt,
  };
}

let lastCommit: { lsn: bigint; text: string } | undefined;

function commitPosition(lsn: bigint): string {
  if (lastCommit?.lsn !== lsn) lastCommit = { lsn, text: formatLsn(lsn) };
  return lastCommit.text;
}
