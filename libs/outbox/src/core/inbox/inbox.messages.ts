/** Texts of the inbox, each naming what is wrong and what to do. */

import { shownValue } from '../shown-value';

export const invalidConsumerName = (got: unknown, problem: string, rule: string) =>
  `Inbox consumer name ${describe(got)} is refused: ${problem}. A consumer name (the consumer argument of process(), processIn(), ` +
  `processEnvelope() and @Idempotent()) is ${rule}. Give every consumer a stable name of its own, e.g. 'billing.order-projector'.`;

export const invalidMessageId = (consumer: string, got: unknown) =>
  `Inbox consumer "${consumer}" was given no message id (got ${describe(got)}). ` +
  `Pass the outbox envelope (or its id, a string of at most 255 characters) to process().`;

export const duplicateConsumerName = (consumer: string, first: string, second: string) =>
  `Inbox consumer name "${consumer}" is used by both ${first} and ${second}. ` +
  `Each handler needs a name of its own, or one would skip messages the other has handled.`;

export const noEnvelopeArgument = (handler: string) =>
  `@Idempotent() handler ${handler} was called without an outbox envelope among its arguments ` +
  `(an object with string "id" and "type"). Take the message with @Payload(), or use OutboxInbox.process() directly.`;

export const inboxNotWired = (handler: string) =>
  `@Idempotent() handler ${handler} runs, but OutboxInboxModule is not imported by the application, ` +
  `so there is nowhere to record messages. Import OutboxInboxModule.forRoot() in the root module.`;

export const outsideInboxTransaction = () =>
  `OutboxInbox.manager() was called outside a handler run by the inbox. ` +
  `Call it from an @Idempotent() handler or from the function given to OutboxInbox.process().`;

export const unknownInboxOption = (key: string, suggestion: string | undefined, known: readonly string[]) =>
  `Unknown OutboxInboxModule option "${key}"` +
  (suggestion ? `: did you mean "${suggestion}"?` : `. Known options: ${known.map((name) => `"${name}"`).join(', ')}.`);

export const notAMethod = (consumer: string, handler: string) =>
  `@Idempotent('${consumer}') on ${handler}: only methods can be idempotent. Put it on the handler method.`;

export const inboxTableMissing = (table: string, cause: string) =>
  `Inbox table "${table}" cannot be read (${cause}). ` +
  `Add CreateInboxTable (or createInboxTableMigration('${table}')) to the data source's migrations and run them.`;

export const invalidInboxOption = (option: string, expected: string, got: unknown) =>
  `Invalid OutboxInboxModule option "${option}": expected ${expected}, got ${describe(got)}.`;

function describe(value: unknown): string {
  if (typeof value === 'string') return shownValue(value);
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  return String(value);
}

export const inboxConnectionWithDataSource = (dataSource: string) =>
  `OutboxInboxModule options "connection" and "dataSource" ("${dataSource}") exclude each other: "dataSource" names the TypeORM data source the inbox ` +
  `opens its transactions on; "connection" runs the inbox without TypeORM, recording messages in your data layer's transaction with processIn(tx, …). Keep one.`;

export const inboxRunTransactionWithConnection = () =>
  `OutboxInboxModule options "runTransaction" and "connection" exclude each other: "runTransaction" opens TypeORM transactions, and with ` +
  `"connection" the inbox opens its transactions on that connection (reach one from a handler with OutboxInbox.manager()). Remove "runTransaction".`;
