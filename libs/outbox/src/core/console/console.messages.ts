/** Texts of the operator console (REST, page and CLI). */

import { shownValue } from '../shown-value';

export const noSuchMessage = (id: string) => `No outbox message has id "${id}". Check the id (the envelope's "id", a UUID) and the table.`;

export const notDeadNow = (id: string, status: string) =>
  `Message "${id}" is ${status}, not dead: only dead messages can be requeued or discarded.`;

export const bulkNeedsAFilter = () =>
  'A bulk action needs at least one filter (type, aggregateType, aggregateId, destination, id, from or to), so that it never takes every row by accident.';

export const bulkOnlyDead = (status: string) => `"status" must be "dead" (or left out) for a bulk action: it changes dead rows only, and "${status}" was given.`;

export const retryNowOnlyPending = (status: string) =>
  `"status" must be "pending" (or left out) for "retry now": it changes rows waiting in backoff only, and "${status}" was given.`;

export const notInBackoff = (id: string, status: string, attempts: number, nextAttemptAt: string | null) =>
  `Message "${id}" is not waiting in backoff (status ${status}, ${attempts} attempt(s), next attempt ${nextAttemptAt ?? 'not set'}): ` +
  '"retry now" applies to pending messages that failed and wait for a later attempt.';

export const unknownDestination = (destination: string) =>
  `No outbox row has ever used the destination "${destination}": check its spelling. To pause it anyway (a destination no message has ` +
  'used yet), confirm it: "confirmUnknown": true in the request body, --confirm-unknown on the command line.';

export const consoleUnsupportedDatabase = (type: unknown) =>
  `The outbox console runs on PostgreSQL, SQLite and MariaDB/MySQL; this data source is "${String(type)}". Use OutboxAdmin from code on other databases.`;

export const invalidDestinationArgument = (action: 'pause' | 'resume', got: unknown, problem: string, rule: string) =>
  `The destination to ${action}, ${shownValue(got)}, is refused: ${problem}. A destination is ${rule}, as the outbox rows name it ` +
  `("nest-outbox paused" and the console list the paused ones).`;
