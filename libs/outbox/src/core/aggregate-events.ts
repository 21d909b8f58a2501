import { OutboxWriteError } from './outbox.errors';
import { cqrsAutoCommit } from './outbox.messages';
import { forgetEvents, getRecordedEvents, type RecordedEvent } from './recorded-events';

/**
 * The part of @nestjs/cqrs's `AggregateRoot` (and `WithAggregateRoot(Base)`) the outbox uses,
 * matched by shape so that the library never imports the optional package.
 */
interface CqrsAggregate {
  autoCommit?: boolean;
  getUncommittedEvents(): object[];
  publishAll(events: object[]): void;
}

/** True for classes whose instances hand their events over: the outbox base/mixin or a cqrs aggregate root. */
export function canHandOverEvents(target: Function): boolean {
  const prototype = target.prototype as Record<string, unknown> | undefined;
  return typeof prototype?.recordEvent === 'function' || typeof prototype?.getUncommittedEvents === 'function';
}

function isCqrsAggregate(aggregate: object): aggregate is CqrsAggregate {
  const candidate = aggregate as Partial<CqrsAggregate>;
  return typeof candidate.getUncommittedEvents === 'function' && typeof candidate.publishAll === 'function';
}

// One RecordedEvent per applied cqrs event, so that a transaction recognises what it has staged.
const appliedEvents = new WeakMap<object, RecordedEvent>();

function asRecorded(event: object): RecordedEvent {
  let recorded = appliedEvents.get(event);
  if (!recorded) {
    recorded = { event, occurredAt: new Date() };
    appliedEvents.set(event, recorded);
  }
  return recorded;
}

/**
 * Events the aggregate holds for the outbox: recorded ones, then those applied with cqrs `apply()`.
 * An event object both recorded and applied (or applied twice) is one message, written once.
 */
export function pendingEventsOf(aggregate: object, aggregateType: string): readonly RecordedEvent[] {
  const recorded = getRecordedEvents(aggregate);
  if (!isCqrsAggregate(aggregate)) return recorded;
  // With autoCommit, apply() hands each event to the EventBus at once and keeps none to write.
  if (aggregate.autoCommit) throw new OutboxWriteError(cqrsAutoCommit(aggregateType));
  const applied = aggregate.getUncommittedEvents();
  if (applied.length === 0) return recorded;
  const seen = new Set(recorded.map((entry) => entry.event));
  const onlyApplied = applied.filter((event) => !seen.has(event) && seen.add(event));
  return [...recorded, ...onlyApplied.map(asRecorded)];
}

/**
 * After the outermost commit: drops the written events from the aggregate and, for a cqrs
 * aggregate, commits them to it (`publishAll`, which `EventPublisher.mergeObjectContext` wires
 * to the EventBus). Events applied since the save stay uncommitted for the next save.
 */
export function commitWrittenEvents(aggregate: object, written: ReadonlySet<RecordedEvent>): void {
  forgetEvents(aggregate, written);
  if (!isCqrsAggregate(aggregate)) return;
  // By object: an event both recorded and applied was written under its recorded entry.
  const writtenEvents = new Set([...written].map((recorded) => recorded.event));
  const uncommitted = aggregate.getUncommittedEvents();
  const done = uncommitted.filter((event) => writtenEvents.has(event));
  if (done.length === 0) return;
  // getUncommittedEvents() returns the aggregate's own buffer; it is trimmed in place, as commit() does.
  const remaining = uncommitted.filter((event) => !writtenEvents.has(event));
  uncommitted.splice(0, uncommitted.length, ...remaining);
  aggregate.publishAll([...new Set(done)]);
}
