import type { AsyncApiDocument } from './asyncapi-document.types';

/** Injection token of `OutboxAsyncApi`, registered: the CLI, which imports no Nest class, finds the service by it in any copy of the library. */
export const OUTBOX_ASYNCAPI = Symbol.for('@nest-outbox/outbox:asyncapi');

/** What the CLI calls on the service it finds by `OUTBOX_ASYNCAPI`. */
export interface AsyncApiSource {
  document(): AsyncApiDocument;
}

/** Token of the app's list of outboxes, found by the CLI as `OUTBOX_ASYNCAPI` is. */
export const OUTBOX_NAMES = Symbol.for('@nest-outbox/outbox:outbox-names');

/** The outboxes an app declares: `undefined` for the one without a name. */
export interface OutboxNames {
  declared(): ReadonlyArray<string | undefined>;
}
