import { invalidDecoratorOption, invalidSchemaOption, invalidUpcaster } from '../core/outbox.messages';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { isDestinationName } from '../core/names';
import { declareOutboxEvent, isEventSchemaShape, type OutboxEventMetadata, type OutboxEventSchema, type OutboxUpcaster } from '../core/event-metadata';

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
  /**
   * The schema the payload is registered with, checked against and encoded in, on Kafka
   * destinations, when the module has `schemaRegistry`: `{ avro }` (a record schema, or the path of
   * a `.avsc` file), `{ protobuf }` (the message descriptor protoc-gen-es generates, `FooSchema`) or
   * `{ jsonSchema }` (a schema, or the path of a `.json` file). Default: none (JSON).
   */
  schema?: OutboxEventSchema;
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
    if (options.schema !== undefined && !isEventSchemaShape(options.schema)) {
      throw new OutboxConfigurationError(invalidSchemaOption(target.name));
    }
    const metadata: OutboxEventMetadata = { type, version, topic: options.topic, validate: options.validate === true, upcast: options.upcast, schema: options.schema };
    declareOutboxEvent(target, metadata);
  };
}
