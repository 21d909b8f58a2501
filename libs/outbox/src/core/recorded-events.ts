import type { RecordEventOptions } from './outbox-message';

/** An event an aggregate has recorded and that is not yet committed to the outbox. */
export interface RecordedEvent {
  readonly event: object;
  readonly occurredAt: Date;
  readonly metadata?: RecordEventOptions;
}

// Symbol-keyed and non-enumerable: invisible to TypeORM, JSON and class-transformer.
const RECORDED_EVENTS = Symbol('outbox:recorded-events');

interface WithBuffer {
  [RECORDED_EVENTS]?: RecordedEvent[];
}

/**
 * Records `event` on `aggregate`; it is written to the outbox when the aggregate is next saved.
 * One event object is one message: recording the same object again changes nothing.
 */
export function recordEvent(aggregate: object, event: object, metadata?: RecordEventOptions): void {
  const buffer = bufferOf(aggregate);
  if (buffer.some((recorded) => recorded.event === event)) return;
  buffer.push({ event, occurredAt: new Date(), metadata });
}

/** Events recorded and not yet committed, oldest first. */
export function getRecordedEvents(aggregate: object): readonly RecordedEvent[] {
  return (aggregate as WithBuffer)[RECORDED_EVENTS] ?? [];
}

/** Drops the given events once their transaction has committed; events recorded since stay. */
export function forgetEvents(aggregate: object, committed: ReadonlySet<RecordedEvent>): void {
  const buffer = (aggregate as WithBuffer)[RECORDED_EVENTS];
  if (!buffer) return;
  const remaining = buffer.filter((recorded) => !committed.has(recorded));
  buffer.splice(0, buffer.length, ...remaining);
}

function bufferOf(aggregate: object): RecordedEvent[] {
  const holder = aggregate as WithBuffer;
  // ORMs may build entities without running constructors, so the buffer is created lazily.
  if (!holder[RECORDED_EVENTS]) {
    Object.defineProperty(holder, RECORDED_EVENTS, { value: [], enumerable: false, writable: false });
  }
  return holder[RECORDED_EVENTS]!;
}

type AbstractConstructor<T = object> = abstract new (...args: any[]) => T;

/**
 * Gives an entity that already extends another class the ability to record events.
 * `class Order extends WithOutboxEvents(BaseEntity) { ... }`
 */
export function WithOutboxEvents<TBase extends AbstractConstructor>(Base: TBase) {
  abstract class OutboxEventsMixin extends Base {
    /** Records an event to be written to the outbox in the transaction that saves this aggregate. */
    recordEvent(event: object, metadata?: RecordEventOptions): void {
      recordEvent(this, event, metadata);
    }
  }
  return OutboxEventsMixin;
}

/** Base class for aggregates that publish events: `class Order extends OutboxAggregateRoot { ... }`. */
export abstract class OutboxAggregateRoot extends WithOutboxEvents(class {}) {}
