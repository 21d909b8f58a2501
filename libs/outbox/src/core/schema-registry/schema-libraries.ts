import type { ProtobufMessageDescriptor } from './event-schema';

// The few members of the libraries the registry client itself depends on (avsc, @bufbuild/protobuf,
// ajv) that the outbox uses to check payloads and compare schemas, declared here so that the
// library's types name no package an application may not have. The loader hands the copies the
// registry client resolves, so that a checked payload is encoded by the same code.

export interface AvroType {
  isValid(value: unknown, options?: { errorHook?: (path: string[], value: unknown, type: AvroType) => void; noUndeclaredFields?: boolean }): boolean;
  createResolver(writer: AvroType): unknown;
  toString(): string;
}

export interface ProtobufRuntime {
  fromJson(descriptor: ProtobufMessageDescriptor, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
  toBinary(schema: unknown, message: unknown): Uint8Array;
  fromBinary(schema: unknown, bytes: Uint8Array): unknown;
  createFileRegistry(file: unknown, resolve: (name: string) => unknown): { getMessage(typeName: string): ProtobufMessageDescriptor | undefined };
  /** `FileDescriptorProtoSchema` of `@bufbuild/protobuf/wkt`. */
  fileDescriptorProtoSchema: unknown;
}

export interface JsonSchemaValidator {
  (value: unknown): boolean;
  errors?: { instancePath: string; message?: string }[] | null;
}

export interface SchemaLibraries {
  avro: { forSchema(schema: unknown, options?: object): AvroType };
  protobuf: ProtobufRuntime;
  jsonSchema: { compile(schema: unknown): JsonSchemaValidator };
}
