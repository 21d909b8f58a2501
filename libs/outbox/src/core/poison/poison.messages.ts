/** Texts of the poison policy: reasons recorded with a message, and errors naming what to do. */

export const notAnEnvelope = (detail: string) => `not an outbox envelope: ${detail}`;

export const badMessageId = (detail: string) => `no valid message id: ${detail}`;

export const handlerFailed = (error: string) => `handler failed: ${error}`;

export const poisonTableMissing = (table: string, cause: string) =>
  `Poison table "${table}" cannot be read (${cause}). Add CreateInboxPoisonTable (or createInboxPoisonTableMigration('${table}')) ` +
  `to the data source's migrations and run them, or turn the policy off with OutboxInboxModule option poison: false.`;

export const invalidPoisonOption = (option: string, expected: string, got: unknown) =>
  `Invalid OutboxInboxModule option "poison${option ? `.${option}` : ''}": expected ${expected}, got ${JSON.stringify(got) ?? String(got)}.`;

export const unknownPoisonOption = (key: string) =>
  `Unknown OutboxInboxModule option "poison.${key}". Known: "maxAttempts", "maxStoredChars" (or poison: false to turn the policy off).`;

export const noPoisonRecord = (consumer: string, key: string) =>
  `No poison record for consumer "${consumer}" and key "${key}". List them with GET poison (console) or \`nest-outbox poison list\`.`;

export const notReplayable = (consumer: string, key: string, why: string) =>
  `The poison record of "${consumer}" / "${key}" cannot be replayed: ${why}. Inspect it, fix the producer, and delete the record.`;

export const noReplayHandler = (consumer: string, known: string[]) =>
  `No handler for consumer "${consumer}" in this process, so its message cannot be replayed here. ` +
  `Known consumers: ${known.length ? known.map((name) => `"${name}"`).join(', ') : 'none'}. Replay it from the app that runs that handler.`;

export const replayFailed = (consumer: string, key: string, error: string) =>
  `Replay of "${consumer}" / "${key}" failed: ${error}. The record stays set aside with one more attempt counted.`;

export const recordVanished = (consumer: string, key: string) =>
  `The poison record of "${consumer}" / "${key}" was deleted while a failure was counted on it; the failure is not counted and the message is redelivered.`;

export const poisonOff = () => `The poison policy is off (OutboxInboxModule option poison: false): there are no poison records here.`;
