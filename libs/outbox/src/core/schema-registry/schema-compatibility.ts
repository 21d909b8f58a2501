import type { LoadedEventSchema, ProtobufMessageDescriptor } from './event-schema';
import type { AvroType, SchemaLibraries } from './schema-libraries';

/** The registry's compatibility levels; the `_TRANSITIVE` ones are checked against the latest version only here. */
export type CompatibilityLevel = 'NONE' | 'BACKWARD' | 'BACKWARD_TRANSITIVE' | 'FORWARD' | 'FORWARD_TRANSITIVE' | 'FULL' | 'FULL_TRANSITIVE';

/** What the registry holds as the latest version of a subject. */
export interface RegisteredVersion {
  version: number;
  schema: string;
  schemaType?: string;
}

/**
 * Why `next` may not follow `registered` under `level`; empty when it may. Avro follows Avro's
 * schema resolution (avsc's resolver: the reader must read every writer's record); Protobuf compares
 * field numbers (a number that keeps its field must keep its type). JSON Schema is left to the
 * registry's own check at registration. BACKWARD: the new schema reads data of the registered one;
 * FORWARD: the registered one reads data of the new; FULL: both.
 */
export function compatibilityProblems(level: CompatibilityLevel, registered: RegisteredVersion, next: LoadedEventSchema, nextText: string, libraries: SchemaLibraries): string[] {
  if (level === 'NONE' || registered.schema === nextText) return [];
  const registeredType = (registered.schemaType ?? 'AVRO').toUpperCase();
  const expected = next.format === 'avro' ? 'AVRO' : next.format === 'protobuf' ? 'PROTOBUF' : 'JSON';
  if (registeredType !== expected) return [`the registered version is ${registeredType}, the event's schema ${expected}`];
  const backward = level.startsWith('BACKWARD') || level.startsWith('FULL');
  const forward = level.startsWith('FORWARD') || level.startsWith('FULL');
  if (next.format === 'avro') return avroProblems(libraries.avro.forSchema(JSON.parse(registered.schema)), libraries.avro.forSchema(next.definition), backward, forward);
  if (next.format === 'protobuf') return protobufProblems(registeredMessage(registered.schema, next.recordName, libraries), next.definition);
  return [];
}

function avroProblems(registered: AvroType, next: AvroType, backward: boolean, forward: boolean): string[] {
  const problems: string[] = [];
  const resolves = (reader: AvroType, writer: AvroType, direction: string) => {
    try {
      reader.createResolver(writer);
    } catch (error) {
      problems.push(`${direction}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  if (backward) resolves(next, registered, 'the new schema cannot read data written with the registered one');
  if (forward) resolves(registered, next, 'the registered schema cannot read data written with the new one');
  return problems;
}

function registeredMessage(base64: string, typeName: string, libraries: SchemaLibraries): ProtobufMessageDescriptor | undefined {
  const { protobuf } = libraries;
  try {
    const file = protobuf.fromBinary(protobuf.fileDescriptorProtoSchema, Buffer.from(base64, 'base64'));
    return protobuf.createFileRegistry(file, () => undefined).getMessage(typeName);
  } catch {
    // A registered file that imports others (resolved by the registry as references) is left to the registry's check.
    return undefined;
  }
}

function protobufProblems(registered: ProtobufMessageDescriptor | undefined, next: ProtobufMessageDescriptor): string[] {
  if (!registered) return [];
  const before = new Map(registered.fields.map((field) => [field.number, field]));
  return next.fields.flatMap((field) => {
    const old = before.get(field.number);
    if (!old || signature(old) === signature(field)) return [];
    return [`field number ${field.number} ("${old.name}", ${signature(old)}) is now "${field.name}", ${signature(field)}: old data would be read as the wrong type`];
  });
}

function signature(field: ProtobufMessageDescriptor['fields'][number]): string {
  const of = field as ProtobufMessageDescriptor['fields'][number] & { listKind?: string; mapKey?: number };
  const element = field.message?.typeName ?? field.enum?.typeName ?? (field.scalar !== undefined ? `scalar ${field.scalar}` : '');
  return [field.fieldKind, of.listKind, of.mapKey, element].filter((part) => part !== undefined && part !== '').join(' ');
}
