import { eventClassOf, getOutboxEventMetadata } from './event-metadata';
import { validatePayloadForSave } from './typed/payload-validation';
import { v7 as uuidv7 } from 'uuid';
import { checkMessageLimits } from './message-limits';
import { OutboxWriteError } from './outbox.errors';
import { conflictingDelay, invalidDelay, invalidDestination, invalidHeader, noDestination, payloadTooLarge, unserializablePayload } from './outbox.messages';
import { isDestinationName } from './names';
import { DEFAULT_TRANSPORT, type EventDraft, type OutboxRoute, type ResolvedOutboxSettings } from './outbox-options';
import type { NewOutboxMessage, RecordEventOptions } from './outbox-message';
import type { ClaimCheck } from './claim-check/claim-check';

/** Everything needed to write one message; what the subscriber and the explicit API both produce. */
export interface MessageDraft extends EventDraft {
  /** Destination chosen by the caller or by `@OutboxEvent({ topic })`; wins over everything else. */
  topic?: string;
  /** Destination of the aggregate (`@PublishesEvents({ topic })`); used when `resolveTopic` gives none. */
  aggregateTopic?: string;
  /** Metadata, and the earliest delivery time (`deliverAt` / `delayMs`). */
  metadata?: RecordEventOptions;
  occurredAt?: Date;
}

type FactorySettings = Pick<ResolvedOutboxSettings, 'defaultTopic' | 'resolveTopic' | 'enrich'> &
  Partial<Pick<ResolvedOutboxSettings, 'routes' | 'maxPayloadBytes'>> & {
    /** Payloads over its threshold are stored out of the message (option `claimCheck`). */
    claims?: ClaimCheck;
    /** Headers taken from the ambient context at write time (the active trace); `enrich` and explicit headers win. */
    captureHeaders?: () => Record<string, string> | undefined;
    /** Routes known only at bootstrap (one per in-process handler). */
    extraRoutes?: () => readonly OutboxRoute[];
    /** Last check of a draft and its rows before they are written (the Schema Registry's); throws to refuse the write. */
    beforeWrite?: (draft: MessageDraft, messages: readonly NewOutboxMessage[]) => void;
  };

interface Destination {
  transport: string;
  destination: string;
}

/**
 * Turns a draft into rows, one per destination: ids, metadata and a payload proven to be JSON
 * and within the size limit.
 */
export class OutboxMessageFactory {
  constructor(
    private readonly settings: FactorySettings,
    private readonly newId: () => string = uuidv7,
    private readonly now: () => Date = () => new Date(),
  ) {}

  create(draft: MessageDraft): NewOutboxMessage[] {
    const destinations = this.destinationsOf(draft);
    checkDeclaredPayload(draft);
    const serialized = serialize(draft.type, draft.payload);
    const bytes = Buffer.byteLength(serialized);
    const ids = destinations.map(() => this.newId());
    // Claimed under the first row's id, before the destination's limit is checked: a stored payload is not in the message.
    const claim = this.settings.claims?.claim(draft.type, ids[0], serialized, bytes);
    const limit = this.settings.maxPayloadBytes;
    if (!claim && limit !== undefined && bytes > limit) throw new OutboxWriteError(payloadTooLarge(draft.type, bytes, limit));
    const payloadJson = claim?.payloadJson ?? serialized;
    const enriched = this.settings.enrich?.(draft) ?? {};
    const explicit = draft.metadata ?? {};
    const headers = { ...this.settings.captureHeaders?.(), ...enriched.headers, ...explicit.headers, ...claim?.headers };
    for (const [name, value] of Object.entries(headers)) {
      if (typeof value !== 'string') throw new OutboxWriteError(invalidHeader(name, value));
    }
    const occurredAt = draft.occurredAt ?? this.now();
    const delayMs = this.delayOf(draft);
    const messages: NewOutboxMessage[] = destinations.map(({ transport, destination }, index) => ({
      id: ids[index],
      type: draft.type,
      version: draft.version,
      aggregateType: draft.aggregateType,
      aggregateId: draft.aggregateId,
      transport,
      destination,
      occurredAt,
      correlationId: explicit.correlationId ?? enriched.correlationId,
      causationId: explicit.causationId ?? enriched.causationId,
      tenantId: explicit.tenantId ?? enriched.tenantId,
      headers,
      payloadJson,
      delayMs,
      ...(claim && index === 0 ? { claimed: claim.claimed } : {}),
    }));
    messages.forEach(checkMessageLimits);
    this.settings.beforeWrite?.(draft, messages);
    return messages;
  }

  /** Milliseconds to hold the message back, counted by the database from the write; undefined for none. */
  private delayOf({ type, metadata }: MessageDraft): number | undefined {
    const { deliverAt, delayMs } = metadata ?? {};
    if (deliverAt !== undefined && delayMs !== undefined) throw new OutboxWriteError(conflictingDelay(type));
    if (delayMs !== undefined) {
      if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0) throw new OutboxWriteError(invalidDelay(type, 'delayMs', delayMs));
      return delayMs > 0 ? Math.round(delayMs) : undefined;
    }
    if (deliverAt !== undefined) {
      if (!(deliverAt instanceof Date) || Number.isNaN(deliverAt.getTime())) throw new OutboxWriteError(invalidDelay(type, 'deliverAt', deliverAt));
      const ms = deliverAt.getTime() - this.now().getTime();
      return ms > 0 ? ms : undefined;
    }
    return undefined;
  }

  private destinationsOf(draft: MessageDraft): Destination[] {
    const primary = draft.topic ?? this.settings.resolveTopic?.(draft) ?? draft.aggregateTopic ?? this.settings.defaultTopic;
    // Written as it is, a blank topic would only fail at every publish until the row died.
    if (primary !== undefined && !isDestinationName(primary)) throw new OutboxWriteError(invalidDestination(draft.type, draft.aggregateType, primary));
    const routed = [...(this.settings.routes ?? []), ...(this.settings.extraRoutes?.() ?? [])]
      .filter((route) => routeMatches(route, draft))
      .map((route) => ({ transport: route.transport, destination: route.topic }));
    const destinations = primary ? [{ transport: DEFAULT_TRANSPORT, destination: primary }, ...routed] : routed;
    if (destinations.length === 0) throw new OutboxWriteError(noDestination(draft.type, draft.aggregateType));
    return destinations;
  }
}

/** An event type declared with `@OutboxEvent({ validate: true })` has its payload checked before anything is written. */
function checkDeclaredPayload(draft: MessageDraft): void {
  const eventClass = eventClassOf(draft.type);
  const metadata = eventClass && getOutboxEventMetadata(eventClass.prototype);
  // The class describes its current version only; older versions written through the explicit API are the caller's.
  if (eventClass && metadata?.validate && metadata.version === draft.version) validatePayloadForSave(draft.type, eventClass, draft.payload);
}

function routeMatches(route: OutboxRoute, draft: MessageDraft): boolean {
  const byEvent = route.events?.includes(draft.type);
  const byAggregate = route.aggregates?.includes(draft.aggregateType);
  if (route.events === undefined && route.aggregates === undefined) return true;
  return Boolean(byEvent || byAggregate);
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
