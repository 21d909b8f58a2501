/**
 * What `@OutboxEvent` and `@PublishesEvents` record on a class, and the readers of it. The
 * decorators only write (decorators/); everything that reads the metadata (the message factory, the
 * typed reader, the TypeORM subscriber, the in-process handlers' explorer) reads it here, so that
 * core never depends on the decorators.
 */

export const OUTBOX_EVENT_METADATA = 'outbox:event_metadata';
export const PUBLISHES_EVENTS_METADATA = 'outbox:publishes_events';

/** `({ type, version, payload }) => payload in the current version's shape`. */
export type OutboxUpcaster = (message: { type: string; version: number; payload: unknown }) => unknown;

import type { OutboxEventSchema } from './schema-registry/event-schema';

export interface OutboxEventMetadata {
  type: string;
  version: number;
  topic?: string;
  validate?: boolean;
  upcast?: OutboxUpcaster;
  schema?: OutboxEventSchema;
}

export { isEventSchemaShape, type OutboxEventSchema } from './schema-registry/event-schema';

export interface PublishesEventsOptions {
  /** Aggregate type written on every message. Default: the entity's table name (stable under minification). */
  aggregateType?: string;
  /** Destination of this aggregate's events unless the event or `resolveTopic` names one. */
  topic?: string;
}

// Event types are declared by decorating classes at import time; handlers naming a type are
// checked against them at bootstrap, so a typo fails the start instead of never matching.
const DECLARED_EVENTS = new Map<string, Function>();
// Aggregates are listed too, so that a description of what the app publishes (AsyncAPI) can tell
// the destinations their events may go to without an instance of any of them.
const DECLARED_AGGREGATES = new Map<Function, PublishesEventsOptions>();

/** Records an event class's metadata (`@OutboxEvent`). */
export function declareOutboxEvent(target: Function, metadata: OutboxEventMetadata): void {
  Reflect.defineMetadata(OUTBOX_EVENT_METADATA, metadata, target);
  DECLARED_EVENTS.set(metadata.type, target);
}

/** Records an aggregate's options (`@PublishesEvents`). */
export function declarePublishesEvents(target: Function, options: PublishesEventsOptions): void {
  Reflect.defineMetadata(PUBLISHES_EVENTS_METADATA, { ...options }, target);
  DECLARED_AGGREGATES.set(target, { ...options });
}

/** The class declaring `type` with `@OutboxEvent`, if one was loaded. */
export function eventClassOf(type: string): Function | undefined {
  return DECLARED_EVENTS.get(type);
}

/** Every event type declared with `@OutboxEvent` so far. */
export function declaredEventTypes(): string[] {
  return [...DECLARED_EVENTS.keys()];
}

/** Every class declared with `@OutboxEvent` so far, with its metadata, in declaration order. */
export function declaredEvents(): { eventClass: Function; metadata: OutboxEventMetadata }[] {
  return [...DECLARED_EVENTS.values()].map((eventClass) => ({ eventClass, metadata: Reflect.getMetadata(OUTBOX_EVENT_METADATA, eventClass) as OutboxEventMetadata }));
}

/** Every class declared with `@PublishesEvents` so far, with its options, in declaration order. */
export function declaredAggregates(): { aggregateClass: Function; options: PublishesEventsOptions }[] {
  return [...DECLARED_AGGREGATES].map(([aggregateClass, options]) => ({ aggregateClass, options }));
}

export function getOutboxEventMetadata(event: object): OutboxEventMetadata | undefined {
  return Reflect.getMetadata(OUTBOX_EVENT_METADATA, event.constructor);
}

export function getPublishesEventsOptions(entity: object): PublishesEventsOptions | undefined {
  return Reflect.getMetadata(PUBLISHES_EVENTS_METADATA, entity.constructor);
}
