import { Injectable } from '@nestjs/common';
import type { OutboxEnvelope } from '@nest-outbox/outbox';

export interface ReceivedEvent {
  transport: string;
  topic: string;
  /** Broker message key, where the transport has one (Kafka). */
  key?: string;
  /** Broker headers, where the transport has them (Kafka). */
  headers?: Record<string, string>;
  envelope: OutboxEnvelope;
  /** How many times this message id arrived: delivery is at-least-once. */
  deliveries: number;
  receivedAt: string;
}

const LIMIT = 1_000;

/** What the demo consumer has seen, newest last, deduplicated by message id (as a real consumer should). */
@Injectable()
export class ReceivedEventsStore {
  private readonly byId = new Map<string, ReceivedEvent>();

  record(event: Omit<ReceivedEvent, 'deliveries' | 'receivedAt'>): ReceivedEvent {
    const known = this.byId.get(event.envelope.id);
    if (known) {
      known.deliveries += 1;
      return known;
    }
    const received = { ...event, deliveries: 1, receivedAt: new Date().toISOString() };
    this.byId.set(event.envelope.id, received);
    if (this.byId.size > LIMIT) this.byId.delete(this.byId.keys().next().value!);
    return received;
  }

  list(aggregateId?: string): ReceivedEvent[] {
    const all = [...this.byId.values()];
    return aggregateId ? all.filter((event) => event.envelope.aggregateId === aggregateId) : all;
  }
}
