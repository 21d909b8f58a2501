import type { AsyncApiDocument } from './asyncapi-document.types';

/** Injection token of `OutboxAsyncApi`, registered: the CLI, which imports no Nest class, finds the service by it in any copy of the library. */
export const OUTBOX_ASYNCAPI = Symbol.for('@nest-outbox/outbox:asyncapi');

/** What the CLI calls on the service it finds by `OUTBOX_ASYNCAPI`. */
export interface AsyncApiSource {
  document(): AsyncApiDocument;
}
