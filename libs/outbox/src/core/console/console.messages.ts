/** Texts of the operator console (REST, page and CLI). */

export const noSuchMessage = (id: string) => `No outbox message has id "${id}". Check the id (the envelope's "id", a UUID) and the table.`;

export const notDeadNow = (id: string, status: string) =>
  `Message "${id}" is ${status}, not dead: only dead messages can be requeued or discarded. Reload to see its current state.`;

export const bulkNeedsAFilter = () =>
  'A bulk action needs at least one filter (type, aggregateType, aggregateId, destination, id, from or to), so that it never takes every dead row by accident.';

export const bulkOnlyDead = (status: string) => `"status" must be "dead" (or left out) for a bulk action: it changes dead rows only, and "${status}" was given.`;

export const consoleUnsupportedDatabase = (type: unknown) =>
  `The outbox console runs on PostgreSQL, SQLite and MariaDB/MySQL; this data source is "${String(type)}". Use OutboxAdmin from code on other databases.`;
