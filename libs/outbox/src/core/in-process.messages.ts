/** Texts of in-process handlers, each naming the culprit and what to do. */

export const missingHandlerName = (handler: string) =>
  `@OnOutboxEvent() on ${handler}: option "name" is required: a stable handler name (e.g. 'billing.send-invoice'). ` +
  `It names the handler's rows in the outbox, so it must survive renames and minification.`;

export const invalidHandlerType = (handler: string, got: unknown) =>
  `@OnOutboxEvent() on ${handler}: the event must be a type name or an @OutboxEvent class, got ${String(got)}.`;

export const duplicateHandlerName = (name: string, first: string, second: string) =>
  `In-process handler name "${name}" is used by both ${first} and ${second}. Give each handler a name of its own: ` +
  `the name identifies its rows in the outbox.`;

export const unknownEventType = (type: string, handler: string, declared: string[]) =>
  `@OnOutboxEvent('${type}') on ${handler}: no @OutboxEvent class declares the event type "${type}", so the handler would never run. ` +
  `Declared types: ${declared.length ? declared.map((t) => `"${t}"`).join(', ') : 'none'}. Fix the name, or declare it with @OutboxEvent('${type}') on an event class.`;

export const reservedTransportName = (name: string) =>
  `OutboxModule option "transports.${name}" uses the name reserved for in-process handlers. Choose another name.`;

export const noSuchHandler = (name: string) =>
  `No in-process handler named "${name}" in this process (was it renamed or removed?); the row is retried with backoff and dies after maxAttempts.`;

export const handlerInboxMissing = (handler: string) =>
  `@OnOutboxEvent() on ${handler} asks for { inbox: true }, but OutboxInboxModule is not imported. Import OutboxInboxModule.forRoot(), or drop the option.`;
