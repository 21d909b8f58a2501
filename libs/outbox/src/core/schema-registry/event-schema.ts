import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { OutboxConfigurationError } from '../outbox.errors';
import { invalidEventSchema, unreadableSchemaFile } from './schema-registry.messages';

/**
 * The schema an event is registered with when the module has `schemaRegistry` (Kafka, Confluent wire
 * format): an Avro record schema, a Protobuf message descriptor (`FooSchema` of protoc-gen-es), or a
 * JSON Schema; Avro and JSON Schema also as the path of a file, read at startup.
 */
export type OutboxEventSchema = { avro: object | string } | { protobuf: object } | { jsonSchema: object | string };

export type SchemaFormat = 'avro' | 'protobuf' | 'json';

/** The registry's name of each format (`schemaType`). */
export const REGISTRY_SCHEMA_TYPE: Record<SchemaFormat, 'AVRO' | 'PROTOBUF' | 'JSON'> = { avro: 'AVRO', protobuf: 'PROTOBUF', json: 'JSON' };

/**
 * The few members of a `@bufbuild/protobuf` message descriptor (`DescMessage`, what protoc-gen-es
 * generates as `FooSchema`) the outbox reads; the descriptor itself is handed to the registry client.
 */
export interface ProtobufMessageDescriptor {
  readonly kind: 'message';
  readonly typeName: string;
  readonly file: { readonly name: string; readonly proto: unknown; readonly dependencies: readonly { readonly name: string }[] };
  readonly fields: readonly { readonly name: string; readonly number: number; readonly fieldKind: string; readonly scalar?: number; readonly message?: { typeName: string }; readonly enum?: { typeName: string } }[];
}

/** An event's schema with its definition in hand (a file it named has been read). */
export type LoadedEventSchema =
  | { format: 'avro'; definition: AvroDefinition; recordName: string }
  | { format: 'json'; definition: Record<string, unknown>; recordName: string }
  | { format: 'protobuf'; definition: ProtobufMessageDescriptor; recordName: string };

export type AvroDefinition = Record<string, unknown> & { type: unknown; name?: string; namespace?: string };

/** True for the shapes `@OutboxEvent({ schema })` takes: exactly one of `avro`, `protobuf`, `jsonSchema`. */
export function isEventSchemaShape(value: unknown): value is OutboxEventSchema {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const [key] = keys;
  const definition = (value as Record<string, unknown>)[key];
  if (key === 'protobuf') return isProtobufDescriptor(definition);
  return (key === 'avro' || key === 'jsonSchema') && (typeof definition === 'string' || (typeof definition === 'object' && definition !== null && !Array.isArray(definition)));
}

function isProtobufDescriptor(value: unknown): value is ProtobufMessageDescriptor {
  const candidate = value as Partial<ProtobufMessageDescriptor> | null;
  return typeof candidate === 'object' && candidate !== null && candidate.kind === 'message' && typeof candidate.typeName === 'string' && typeof candidate.file === 'object';
}

/**
 * Reads an event's schema: an object as given, a string as the path of a `.avsc` / JSON Schema
 * file (relative to `baseDir`, the working directory by default), read once at startup.
 */
export function loadEventSchema(eventType: string, schema: OutboxEventSchema, baseDir = process.cwd()): LoadedEventSchema {
  if (!isEventSchemaShape(schema)) throw new OutboxConfigurationError(invalidEventSchema(eventType, schema));
  if ('protobuf' in schema) return { format: 'protobuf', definition: schema.protobuf as ProtobufMessageDescriptor, recordName: (schema.protobuf as ProtobufMessageDescriptor).typeName };
  if ('avro' in schema) {
    const definition = readDefinition(eventType, 'avro', schema.avro, baseDir) as AvroDefinition;
    if (definition.type !== 'record' || typeof definition.name !== 'string') throw new OutboxConfigurationError(invalidEventSchema(eventType, schema, 'an Avro event schema must be a record with a "name"'));
    const recordName = definition.name.includes('.') || typeof definition.namespace !== 'string' ? definition.name : `${definition.namespace}.${definition.name}`;
    return { format: 'avro', definition, recordName };
  }
  const definition = readDefinition(eventType, 'jsonSchema', schema.jsonSchema, baseDir);
  // RecordNameStrategy needs a name: a JSON Schema's "title", else the event type.
  return { format: 'json', definition, recordName: typeof definition.title === 'string' ? definition.title : eventType };
}

function readDefinition(eventType: string, key: string, given: string | object, baseDir: string): Record<string, unknown> {
  if (typeof given !== 'string') return given as Record<string, unknown>;
  const path = isAbsolute(given) ? given : resolve(baseDir, given);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new OutboxConfigurationError(unreadableSchemaFile(eventType, key, path, error instanceof Error ? error.message : String(error)));
  }
}

/** The schema as the registry stores it: Avro and JSON Schema as JSON text, Protobuf as a base64 FileDescriptorProto. */
export function registrySchemaText(schema: LoadedEventSchema, encodeFileDescriptor: (proto: unknown) => Uint8Array): string {
  if (schema.format !== 'protobuf') return JSON.stringify(schema.definition);
  return Buffer.from(encodeFileDescriptor(schema.definition.file.proto)).toString('base64');
}
