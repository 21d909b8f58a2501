/** Texts of typed payloads, each naming the event, the field and what to do. */

export const missingValidationPackage = (name: string, eventType: string) =>
  `Event "${eventType}" asks for payload validation (@OutboxEvent({ validate: true })), which needs the package "${name}". ` +
  `Install it: npm install class-validator class-transformer`;

export const invalidPayload = (eventType: string, problems: string[], when: 'save' | 'receive') =>
  (when === 'save'
    ? `Event "${eventType}" cannot be written to the outbox: its payload fails validation: `
    : `Received event "${eventType}" has an invalid payload: `) +
  `${problems.join('; ')}.` +
  (when === 'save' ? ' Nothing was written; the transaction rolls back.' : ' It will not become valid by retrying.');

export const wrongEventType = (expected: string, got: unknown) =>
  `Expected an outbox envelope of type "${expected}", got ${typeof got === 'string' ? `"${got}"` : String(got)}. ` +
  `Route this message to the handler of its own type.`;

export const newerVersion = (eventType: string, got: number, known: number) =>
  `Received event "${eventType}" version ${got}, but this code knows versions up to ${known}. Deploy the consumer with the newer event class first.`;

export const olderVersionWithoutUpcaster = (eventType: string, got: number, known: number) =>
  `Received event "${eventType}" version ${got}, older than the current version ${known}, and @OutboxEvent() declares no "upcast" hook ` +
  `to bring it to the current shape. Add upcast: ({ version, payload }) => currentPayload.`;

export const notAnEventClass = (name: string) =>
  `${name} is not an event class: decorate it with @OutboxEvent('context.something-happened').`;
