import { v7 as uuidv7 } from 'uuid';
import { OutboxWriteError } from './outbox.errors';
import { invalidHeader, noDestination, unserializablePayload } from './outbox.messages';
import type { EventDraft, ResolvedOutboxSettings } from './outbox-options';
import type { MessageMetadata, NewOutboxMessage } from './outbox-message';

/** Everything needed to write one message; what the subscriber and the explicit API both produce. */
export interface MessageDraft extends EventDraft {
  /** Destination chosen by the caller or by `@OutboxEvent({ topic })`; wins over everything else. */
  topic?: string;
  /** Destination of the aggregate (`@PublishesEvents({ topic })`); used when `resolveTopic` gives none. */
  aggregateTopic?: string;
  metadata?: MessageMetadata;
  occurredAt?: Date;
}

type FactorySettings = Pick<ResolvedOutboxSettings, 'defaultTopic' | 'resolveTopic' | 'enrich'>;

/** Turns drafts into rows: ids, destination, metadata and a payload proven to be JSON. */
export class OutboxMessageFactory {
  constructor(
    private readonly settings: FactorySettings,
    private readonly newId: () => string = uuidv7,
    private readonly now: () => Date = () => new Date(),
  ) {}

  create(draft: MessageDraft): NewOutboxMessage {
    const enriched = this.settings.enrich?.(draft) ?? {};
    const explicit = draft.metadata ?? {};
    const headers = { ...enriched.headers, ...explicit.headers };
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== 'string') throw new OutboxWriteError(invalidHeader(name, value));
    }
    return {
      id: this.newId(),
      type: draft.type,
      version: draft.version,
      aggregateType: draft.aggregateType,
      aggregateId: draft.aggregateId,
      destination: this.destinationOf(draft),
      occurredAt: draft.occurredAt ?? this.now(),
      correlationId: explicit.correlationId ?? enriched.correlationId,
      causationId: explicit.causationId ?? enriched.causationId,
      tenantId: explicit.tenantId ?? enriched.tenantId,
      headers,
      payloadJson: serialize(draft.type, draft.payload),
    };
  }

  private destinationOf(draft: MessageDraft): string {
    const destination =
      draft.topic ?? this.settings.resolveTopic?.(draft) ?? draft.aggregateTopic ?? this.settings.defaultTopic;
    if (!destination) throw new OutboxWriteError(noDestination(draft.type, draft.aggregateType));
    return destination;
  }
}

function serialize(eventType: string, payload: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (error) {
    throw new OutboxWriteError(unserializablePayload(eventType, error instanceof Error ? error.message : String(error)));
  }
  return json ?? 'null';
}
