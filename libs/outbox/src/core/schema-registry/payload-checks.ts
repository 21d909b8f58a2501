import { OutboxConfigurationError } from '../outbox.errors';
import type { LoadedEventSchema } from './event-schema';
import type { SchemaLibraries } from './schema-libraries';
import { unparsableSchema } from './schema-registry.messages';

/** `payload => problems`, each naming the field: `"amount" (…)`. Empty when the payload fits. */
export type PayloadCheck = (payload: unknown) => string[];

/**
 * Compiles an event's schema once, at startup, into a synchronous check of payloads: the outbox
 * runs it in the write path, before the INSERT, so that a payload the schema refuses fails the
 * caller's transaction instead of every publish attempt later.
 */
export function compilePayloadCheck(eventType: string, schema: LoadedEventSchema, libraries: SchemaLibraries): PayloadCheck {
  const parse = <T>(build: () => T): T => {
    try {
      return build();
    } catch (error) {
      throw new OutboxConfigurationError(unparsableSchema(eventType, schema.format, error instanceof Error ? error.message : String(error)));
    }
  };
  if (schema.format === 'avro') {
    const type = parse(() => libraries.avro.forSchema(schema.definition));
    return (payload) => {
      const problems: string[] = [];
      type.isValid(payload, { errorHook: (path, value, fieldType) => problems.push(`"${path.join('.') || '(payload)'}" (${describe(value)} is not a valid ${shortType(fieldType)})`) });
      if (problems.length > 0) return problems;
      // Avro would drop a field its schema does not declare in silence; it is a typo more often than not.
      type.isValid(payload, { noUndeclaredFields: true, errorHook: (path) => problems.push(`"${path.join('.') || '(payload)'}" (has fields the schema does not declare)`) });
      return problems;
    };
  }
  if (schema.format === 'protobuf') {
    const descriptor = schema.definition;
    return (payload) => {
      try {
        libraries.protobuf.fromJson(descriptor, payload);
        return [];
      } catch (error) {
        // @bufbuild/protobuf names the field: `cannot decode field shop.PaymentTaken.amount from JSON: "abc"`.
        return [error instanceof Error ? error.message : String(error)];
      }
    };
  }
  const validate = parse(() => libraries.jsonSchema.compile(schema.definition));
  return (payload) => (validate(payload) ? [] : (validate.errors ?? []).map((error) => `"${error.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(payload)'}" (${error.message ?? 'invalid'})`));
}

function describe(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

function shortType(type: { toString(): string }): string {
  const text = type.toString();
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}
