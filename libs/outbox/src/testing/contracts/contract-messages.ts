import { randomUUID } from 'node:crypto';
import type { NewOutboxMessage } from '../../core/outbox-message';

/** What a contract case says about a message; everything else gets a value that round-trips visibly. */
export interface ContractMessageSpec {
  aggregateId: string;
  destination?: string;
  transport?: string;
  delayMs?: number;
  /** Distinguishes the messages of one aggregate in the payload. */
  n?: number;
}

export const CONTRACT_DESTINATION = 'outbox-contract';

/**
 * A message as the outbox's writer hands it to a store. Every optional field is set, and the
 * payload and headers hold non-ASCII text, so that a store dropping or mangling one is caught.
 */
export function contractMessage(spec: ContractMessageSpec): NewOutboxMessage {
  return {
    id: randomUUID(),
    type: 'contract.something-happened',
    version: 2,
    aggregateType: 'contract-aggregate',
    aggregateId: spec.aggregateId,
    transport: spec.transport ?? 'default',
    destination: spec.destination ?? CONTRACT_DESTINATION,
    // Whole milliseconds: that is what an ISO-8601 string carries.
    occurredAt: new Date(Math.floor(Date.now())),
    correlationId: `corr-${spec.aggregateId}`,
    causationId: `cause-${spec.aggregateId}`,
    tenantId: 'tenant-ü',
    headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-note': 'Grüße' },
    payloadJson: JSON.stringify({ n: spec.n ?? 0, text: 'naïve café ✓', nested: { list: [1, 2, 3] } }),
    ...(spec.delayMs === undefined ? {} : { delayMs: spec.delayMs }),
  };
}

/** `count` messages of one aggregate, numbered from 1 in the payload. */
export function contractRun(aggregateId: string, count: number, spec: Omit<ContractMessageSpec, 'aggregateId' | 'n'> = {}): NewOutboxMessage[] {
  return Array.from({ length: count }, (_, index) => contractMessage({ ...spec, aggregateId, n: index + 1 }));
}
