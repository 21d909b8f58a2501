/** The parts of an AsyncAPI 3.0.0 document this library writes (https://www.asyncapi.com/docs/reference/specification/v3.0.0). */

export type JsonSchema = Record<string, unknown>;

export interface AsyncApiReference {
  $ref: string;
}

export interface AsyncApiInfo {
  title: string;
  version: string;
  description?: string;
}

export interface AsyncApiChannel {
  address: string;
  title?: string;
  description?: string;
  messages: Record<string, AsyncApiReference>;
}

export interface AsyncApiOperation {
  action: 'send';
  channel: AsyncApiReference;
  summary?: string;
  messages: AsyncApiReference[];
}

export interface AsyncApiMessage {
  name: string;
  title?: string;
  summary?: string;
  description?: string;
  contentType: string;
  headers?: AsyncApiReference;
  payload: JsonSchema;
  bindings?: Record<string, unknown>;
  [extension: `x-${string}`]: unknown;
}

export interface AsyncApiDocument {
  asyncapi: '3.0.0';
  info: AsyncApiInfo;
  defaultContentType: string;
  servers?: Record<string, unknown>;
  channels: Record<string, AsyncApiChannel>;
  operations: Record<string, AsyncApiOperation>;
  components: { messages: Record<string, AsyncApiMessage>; schemas: Record<string, JsonSchema> };
}
