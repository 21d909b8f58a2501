import { invalidDecoratorOption, invalidUpcaster } from '../core/outbox.messages';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { isDestinationName } from '../core/names';

export const OUTBOX_EVENT_METADATA = 'outbox:event_metadata';

export interface OutboxEventOptions {
  /** Schema version of the payload; consumers use it to read old and new shapes. Default `1`. */
  version?: number;
  /** Destination for this event type, overriding the aggregate's and the module's. */
  topic?: string;
  /**
   * Validate the payload with the class's class-validator decorators when it is saved (a bad payload
   * fails the save, naming the field) and when a consumer reads it with `toOutboxEvent` / `OutboxEventPipe`.
   * Needs class-validator and class-transformer. Default `false`.
   */
  validate?: boolean;
  /**
   * Brings the payload of an older `version` to the current shape, for consumers reading with
   * `toOutboxEvent` / `OutboxEventPipe`. Default: none (older versions are refused).
   */
  upcast?: OutboxUpcaster;
}

/** `({ type, version, payload }) => payload in the current version's shape`. */
export type OutboxUpcaster = (message: { type: string; version: number; payload: unknown }) => unknown;

export interface OutboxEventMetadata {
  type: string;
  version: number;
  topic?: string;
  validate?: boolean;
  upcast?: OutboxUpcaster;
}

/**
 * Names a domain event class. The name is what consumers see and must not change when the
 * code is minified or the class renamed, so it is given as a string, never taken from the class.
 */
export function OutboxEvent(type: string, options: OutboxEventOptions = {}): ClassDecorator {
  return (target) => {
    if (typeof type !== 'string' || type.trim() === '') {
      throw new OutboxConfigurationError(invalidDecoratorOption('OutboxEvent', target.name, 'type', type));
    }
    const version = options.version ?? 1;
    if (!Number.isSafeInteger(version) || version < 1) {
      throw new OutboxConfigurationError(`@OutboxEvent() on ${target.name}: "version" must be a positive integer, got ${String(version)}.`);
    }
    if (options.topic !== undefined && !isDestinationName(options.topic)) {
      throw new OutboxConfigurationError(invalidDecoratorOption('OutboxEvent', target.name, 'topic', options.topic));
    }
    if (options.upcast !== undefined && typeof options.upcast !== 'function') {
      throw new OutboxConfigurationError(invalidUpcaster(target.name));
    }
    const metadata: OutboxEventMetadata = { type, version, topic: options.topic, validate: options.validate === true, upcast: options.upcast };
    Reflect.defineMetadata(OUTBOX_EVENT_METADATA, metadata, target);
    DECLARED_EVENTS.set(type, target as unknown as Function);
  };
}

// Event types are declared by decorating classes at import time; handlers naming a type are
// checked against them at bootstrap, so a typo fails the start instead of never matching.
const DECLARED_EVENTS = new Map<string, Function>();

/** The class declaring `type` with `@OutboxEvent`, if one was loaded. */
export function eventClassOf(type: string): Function | undefined {
  return DECLARED_EVENTS.get(type);
}

/** Every event type declared with `@OutboxEvent` so far. */
export function declaredEventTypes(): string[] {
  return [...DECLARED_EVENTS.keys()];
}

export function getOutboxEventMetadata(event: object): OutboxEventMetadata | undefined {
  return Reflect.getMetadata(OUTBOX_EVENT_METADATA, event.constructor);
}
