import { findOptionalPeer } from '../optional-peer';
import type { JsonSchema } from './asyncapi-document.types';
import { fieldsNeedSchemaPackage, noFieldsDeclared } from './asyncapi.messages';

export const SCHEMA_PACKAGE = 'class-validator-jsonschema';
export const SCHEMA_POINTER = '#/components/schemas/';

interface ClassValidator {
  getMetadataStorage(): { getTargetValidationMetadatas(target: Function, schema: string, always: boolean, strictGroups: boolean): unknown[] };
}

interface SchemaGenerator {
  targetConstructorToSchema(target: Function, options: object): JsonSchema;
  validationMetadatasToSchemas(options: object): Record<string, JsonSchema>;
}

/** The payload's schema, and the schemas of the nested classes it points to (`$ref` into components.schemas). */
export interface PayloadSchema {
  schema: JsonSchema;
  referenced: Record<string, JsonSchema>;
}

/**
 * The JSON Schema of an event class's payload, from its class-validator decorators, through
 * class-validator-jsonschema (an optional peer). Never fails: without decorators or without the
 * package, the payload is an object and its description says what would describe its fields.
 */
export function payloadSchemaOf(eventClass: Function): PayloadSchema {
  const validator = findOptionalPeer<ClassValidator>('class-validator');
  const declared = validator?.getMetadataStorage().getTargetValidationMetadatas(eventClass, '', true, false) ?? [];
  if (declared.length === 0) return { schema: { type: 'object', description: noFieldsDeclared(eventClass.name) }, referenced: {} };
  const generator = findOptionalPeer<SchemaGenerator>(SCHEMA_PACKAGE);
  if (!generator) return { schema: { type: 'object', description: fieldsNeedSchemaPackage(eventClass.name, SCHEMA_PACKAGE) }, referenced: {} };
  // class-transformer's @Type() tells the class of nested values; without it they stay plain objects.
  const transformerStorage = findOptionalPeer<{ defaultMetadataStorage: unknown }>('class-transformer/cjs/storage')?.defaultMetadataStorage;
  const options = { refPointerPrefix: SCHEMA_POINTER, classTransformerMetadataStorage: transformerStorage };
  const schema = generator.targetConstructorToSchema(eventClass, options);
  return { schema, referenced: referencedSchemas(schema, () => generator.validationMetadatasToSchemas(options)) };
}

/** The schemas `schema` points to, and those they point to in turn. */
function referencedSchemas(schema: JsonSchema, all: () => Record<string, JsonSchema>): Record<string, JsonSchema> {
  const found: Record<string, JsonSchema> = {};
  let known: Record<string, JsonSchema> | undefined;
  const pending = [...pointersIn(schema)];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (found[name]) continue;
    known ??= all();
    // A nested class without decorators has no schema of its own: any object.
    found[name] = known[name] ?? { type: 'object' };
    pending.push(...pointersIn(found[name]));
  }
  return found;
}

function pointersIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(pointersIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, nested]) =>
    key === '$ref' && typeof nested === 'string' && nested.startsWith(SCHEMA_POINTER) ? [nested.slice(SCHEMA_POINTER.length)] : pointersIn(nested),
  );
}
