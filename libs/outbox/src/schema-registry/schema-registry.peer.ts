import { dependencyOfPeer, loadOptionalPeers } from '../core/optional-peer';
import type { ProtobufMessageDescriptor, SchemaFormat } from '../core/schema-registry/event-schema';
import type { SchemaLibraries } from '../core/schema-registry/schema-libraries';
import type { SchemaRegistryClientLike } from '../core/schema-registry/schema-registry.options';
import { missingRegistryPackage, SCHEMA_REGISTRY_PACKAGE } from '../core/schema-registry/schema-registry.messages';

/** A serializer of the registry client: the Confluent wire format (magic byte 0, schema id, Protobuf message indexes, payload). */
export interface WireSerializer {
  serialize(topic: string, message: unknown): Promise<Buffer>;
}

/** A deserializer of the registry client: the writer's schema is fetched by the id in the record. */
export interface WireDeserializer {
  deserialize(topic: string, bytes: Buffer): Promise<unknown>;
}

/** What the outbox takes from `@confluentinc/schemaregistry`: clients, its serializers, and the libraries it encodes with. */
export interface SchemaRegistryPeer {
  libraries: SchemaLibraries;
  /** A deserializer of `format` that reads any subject (the schema id alone finds the writer's schema); Protobuf messages come as their JSON form. */
  newDeserializer(format: SchemaFormat, client: SchemaRegistryClientLike): WireDeserializer;
  newClient(config: Record<string, unknown>): SchemaRegistryClientLike;
  /** A serializer that writes with the schema of `schemaId`, registered under `subject`. */
  newSerializer(format: SchemaFormat, client: SchemaRegistryClientLike, subject: string, schemaId: number, descriptor?: ProtobufMessageDescriptor): WireSerializer;
}

type SerializerClass = new (client: unknown, serdeType: unknown, config: Record<string, unknown>) => WireSerializer;
type DeserializerClass = new (client: unknown, serdeType: unknown, config: Record<string, unknown>) => WireDeserializer & { fileRegistry?: { getMessage(typeName: string): unknown } };

interface RegistryPackage {
  SchemaRegistryClient: new (config: Record<string, unknown>) => SchemaRegistryClientLike;
  AvroSerializer: SerializerClass;
  ProtobufSerializer: SerializerClass;
  JsonSerializer: SerializerClass;
  AvroDeserializer: DeserializerClass;
  ProtobufDeserializer: DeserializerClass;
  JsonDeserializer: DeserializerClass;
  SerdeType: { VALUE: unknown };
}

let loaded: SchemaRegistryPeer | undefined;

/**
 * Loads `@confluentinc/schemaregistry` (an optional peer) when `schemaRegistry` is configured, and
 * the libraries it encodes with (avsc, @bufbuild/protobuf, ajv) as it resolves them, so that the
 * outbox checks a payload with the very code that will encode it.
 */
export function loadSchemaRegistry(): SchemaRegistryPeer {
  if (loaded) return loaded;
  const [registry] = loadOptionalPeers<[RegistryPackage]>([SCHEMA_REGISTRY_PACKAGE], () => missingRegistryPackage());
  const fromRegistry = (name: string): unknown => dependencyOfPeer(SCHEMA_REGISTRY_PACKAGE, name);
  const avsc = fromRegistry('avsc') as { Type: SchemaLibraries['avro'] };
  const protobuf = fromRegistry('@bufbuild/protobuf') as { fromJson: SchemaLibraries['protobuf']['fromJson']; toBinary: SchemaLibraries['protobuf']['toBinary']; fromBinary: SchemaLibraries['protobuf']['fromBinary']; createFileRegistry: SchemaLibraries['protobuf']['createFileRegistry']; createMutableRegistry(...descriptors: unknown[]): unknown; toJson(descriptor: unknown, message: unknown): unknown };
  const wkt = fromRegistry('@bufbuild/protobuf/wkt') as { FileDescriptorProtoSchema: unknown };
  const Ajv = (fromRegistry('ajv') as { default: new (options: object) => SchemaLibraries['jsonSchema'] }).default;
  const libraries: SchemaLibraries = {
    avro: { forSchema: (schema, options) => avsc.Type.forSchema(schema, options) },
    protobuf: { ...protobuf, fileDescriptorProtoSchema: wkt.FileDescriptorProtoSchema },
    // The registry's serializer validates with ajv too; strict off: a schema's own keywords (e.g. "connect.*") are not errors.
    jsonSchema: new Ajv({ allErrors: true, strict: false }),
  };
  const serializerOf: Record<SchemaFormat, SerializerClass> = { avro: registry.AvroSerializer, protobuf: registry.ProtobufSerializer, json: registry.JsonSerializer };
  const deserializerOf: Record<SchemaFormat, DeserializerClass> = { avro: registry.AvroDeserializer, protobuf: registry.ProtobufDeserializer, json: registry.JsonDeserializer };
  loaded = {
    libraries,
    newClient: (config) => new registry.SchemaRegistryClient(config),
    newDeserializer: (format, client) => {
      // An empty subject: the registry finds the schema by id, whichever strategy named its subject.
      const deserializer = new deserializerOf[format](client, registry.SerdeType.VALUE, { subjectNameStrategy: () => '' });
      if (format !== 'protobuf') return deserializer;
      return {
        // A Protobuf message as its JSON form, what the outbox stored; the deserializer replaces its file registry as it learns schemas, so it is read after.
        deserialize: async (topic, bytes) => {
          const message = (await deserializer.deserialize(topic, bytes)) as { $typeName: string };
          return protobuf.toJson(deserializer.fileRegistry!.getMessage(message.$typeName), message);
        },
      };
    },
    newSerializer: (format, client, subject, schemaId, descriptor) =>
      new serializerOf[format](client, registry.SerdeType.VALUE, {
        useSchemaId: schemaId,
        autoRegisterSchemas: false,
        // The subject was chosen (and the schema registered under it) at startup.
        subjectNameStrategy: () => subject,
        ...(descriptor ? { registry: protobuf.createMutableRegistry(descriptor) } : {}),
      }),
  };
  return loaded;
}
