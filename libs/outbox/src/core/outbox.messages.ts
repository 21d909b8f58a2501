/** Every text the library shows a user, in one place, each naming what is wrong and what to do. */

import { shownValue } from './shown-value';

export const invalidOption = (option: string, expected: string, got: unknown) =>
  `Invalid OutboxModule option "${option}": expected ${expected}, got ${describe(got)}.`;

export const conflictingOptions = (first: string, second: string, why: string) =>
  `OutboxModule options "${first}" and "${second}" cannot work together: ${why}.`;

export const unknownTransportToken = (option: string, token: string) =>
  `OutboxModule option "${option}" names the provider ${token}, but no module provides it. ` +
  `Register it with ClientsModule.register([{ name: ${token}, ... }]) in a module the app imports, ` +
  `or pass a ClientProxy or an OutboxTransport object instead.`;

export const notATransport = (option: string, token: string, got: unknown) =>
  `OutboxModule option "${option}": the provider ${token} is ${describe(got)}, ` +
  `which is neither a ClientProxy nor an OutboxTransport ({ name, publish(message) }).`;

export const notATransportValue = (option: string, got: unknown) =>
  `OutboxModule option "${option}" is ${describe(got)}, which is neither a ClientsModule token (a string, symbol or class), ` +
  `a ClientProxy nor an OutboxTransport ({ name, publish(message) }).`;

export const listenerWouldHoldThePool = (poolSize: number) =>
  `OutboxModule option "notifications": the relay's LISTEN connection would hold the only connection of the data source's pool ` +
  `(max ${poolSize}), and every other query of the app would wait for it forever. Give the pool at least 2 connections ` +
  `(TypeORM's poolSize, or extra.max), or set notifications: false (the relay then finds other instances' rows by polling).`;

export const relayStartWithoutHttpServer = () =>
  `OutboxModule option "relayStart": 'listen' starts the relay when the HTTP server listens, but this application has none ` +
  `(NestFactory.createMicroservice, createApplicationContext or a TestingModule without createNestApplication()), so the relay ` +
  `would never start. Use 'bootstrap', or 'manual' and call OutboxRelayHost.start() once the app's listeners are up.`;

export const missingTransport = () =>
  `OutboxModule option "transport" (or "transports") is required when "relay" is enabled. ` +
  `Set it to a ClientsModule token, a ClientProxy or an OutboxTransport, or set relay: false for a write-only instance.`;

export const unserializablePayload = (eventType: string, cause: string) =>
  `Event "${eventType}" cannot be written to the outbox: its payload is not serializable as JSON (${cause}). ` +
  `Use strings for BigInt values and remove circular references.`;

export const missingEventType = (className: string) =>
  `${className} was recorded as a domain event but has no event type. ` +
  `Decorate it with @OutboxEvent('context.something-happened') so that its name survives minification.`;

export const invalidDestination = (eventType: string, aggregateType: string, destination: unknown) =>
  `Event "${eventType}" of aggregate "${aggregateType}" names the destination ${describe(destination)}, which no broker takes ` +
  `(blank, not a string, or with control characters). Fix the topic given to OutboxPublisher.add or returned by resolveTopic.`;

export const noDestination = (eventType: string, aggregateType: string) =>
  `No destination for event "${eventType}" of aggregate "${aggregateType}". ` +
  `Give it a topic: OutboxPublisher.add(tx, { ..., topic: 'orders' }) for this event, { topic } in @PublishesEvents or @OutboxEvent, ` +
  `or "defaultTopic" / "resolveTopic" in the OutboxModule options.`;

export const invalidDecoratorOption = (decorator: string, target: string, option: string, got: unknown) =>
  `@${decorator}() on ${target}: option "${option}" must be a non-empty string without control characters, got ${describe(got)}.`;

export const saveOutsideTransaction = (aggregateType: string) =>
  `Aggregate "${aggregateType}" has unpublished events but is being saved outside a transaction ` +
  `(save(..., { transaction: false })?). Save it inside a transaction so its events commit with it.`;

export const addOutsideTransaction = () =>
  `OutboxPublisher.add() needs an EntityManager that runs inside a transaction, ` +
  `e.g. dataSource.transaction(async (manager) => outbox.add(manager, ...)).`;

export const missingAggregateId = (aggregateType: string) =>
  `Aggregate "${aggregateType}" has events but no id once saved; the id is the message key.`;

export const unsupportedDatabase = (type: string) =>
  `The outbox does not support the TypeORM driver "${type}" yet. Supported: postgres, better-sqlite3, mariadb, mysql.`;

/** The relay's startup probe failed: the table (in its schema, if one is set) is missing or incomplete. */
export function outboxTableUnreadable({ tableName, schema }: { tableName: string; schema?: string }, reason: string): string {
  if (schema === undefined) {
    return (
      `Outbox table "${tableName}" cannot be read (${reason}). ` +
      `Add CreateOutboxTable (or createOutboxTableMigration('${tableName}')) to the data source's migrations and run them. ` +
      `A table made by an earlier version lacks "${tableName}_paused": add AddOutboxPausedTable ` +
      `(or createOutboxPausedTableMigration('${tableName}')) to the migrations, and for its "reason" column AddOutboxPauseReason ` +
      `(or createOutboxPauseReasonMigration('${tableName}')). On MariaDB/MySQL, a table made before the commit-order locks moved to a table ` +
      `lacks "${tableName}_locks": add createOutboxLocksTableMigration('${tableName}') from '@nest-outbox/outbox/typeorm'; "npx nest-outbox sql" prints the DDL.`
    );
  }
  const location = `{ tableName: '${tableName}', schema: '${schema}' }`;
  return (
    `Outbox table "${schema}.${tableName}" cannot be read (${reason}); it is looked for in schema "${schema}" (the "schema" option), not on the search_path. ` +
    `Add createOutboxTableMigration(${location}) to the data source's migrations and run them. ` +
    `A table made by an earlier version lacks "${schema}.${tableName}_paused": add createOutboxPausedTableMigration(${location}) ` +
    `to the migrations, and for its "reason" column createOutboxPauseReasonMigration(${location}); "npx nest-outbox sql --schema ${schema}" prints the DDL.`
  );
}

export const schemaNeedsPostgres = (type: string, schema: string) =>
  `Invalid OutboxModule option "schema" ("${schema}"): a schema is supported on PostgreSQL only, not on the TypeORM driver "${type}". ` +
  (type === 'mariadb' || type === 'mysql'
    ? `On MariaDB/MySQL a schema is a database: set "database" in the DataSource options instead, and leave "schema" out.`
    : `Leave "schema" out.`);

export const payloadTooLarge = (eventType: string, bytes: number, limit: number) =>
  `Event "${eventType}" cannot be written to the outbox: its payload is ${bytes} bytes, over the limit of ${limit} bytes ` +
  `(option "maxPayloadBytes"), the most a message may carry to its destination. Turn on the claim check (option "claimCheck") to store large payloads out of the message, or raise "maxPayloadBytes" if the destination accepts more.`;

export const unknownRouteTransport = (index: number, transport: string, known: string[]) =>
  `OutboxModule option "routes[${index}].transport" names the transport "${transport}", which is not configured. ` +
  `Known transports: ${known.map((name) => `"${name}"`).join(', ') || 'none'}. Add it to "transports".`;

export const unacknowledgedTransport = (name: string, why: string, refused: boolean) =>
  `Outbox transport "${name}" cannot confirm that the broker has a message (${why}): a row is marked published once ` +
  `the message is handed over, and a broker crash can lose it. ` +
  (refused
    ? `Option "requireAcknowledgement" is true: use an acknowledging transport, or set it to false to accept this.`
    : `Set "requireAcknowledgement: true" to refuse such transports.`);

export const transportNotReadyAtStart = (label: string, why: string) =>
  `Outbox transport ${label} was not ready when the relay started (${why}). The relay starts anyway: its publishes go out once the broker answers, ` +
  `and a failed one is retried with backoff. Check the transport's brokers or address if this persists.`;

export const noTransportForRow = (transport: string) =>
  `No transport named "${transport}" is configured on this relay; the row waits for one (retried with backoff).`;

export const notAMessageId = (id: unknown) => `${describe(id)} is not an outbox message id (a UUID). Nothing was changed.`;

export const noSuchMessage = (id: string, table: string) => `Outbox message ${id} does not exist in "${table}". Nothing was changed.`;

export const notDead = (action: string, id: string, status: string) =>
  `Outbox message ${id} is ${status}, not dead: only dead messages can be ${action}. Nothing was changed.`;

export const invalidUpcaster = (target: string) =>
  `@OutboxEvent() on ${target}: "upcast" must be a function ({ type, version, payload }) => payload in the current shape.`;

export const invalidDelay = (eventType: string, option: 'delayMs' | 'deliverAt', got: unknown) =>
  `Event "${eventType}" cannot be written to the outbox: "${option}" must be ` +
  (option === 'delayMs' ? 'a number of milliseconds, 0 or more' : 'a valid Date') +
  `, got ${describe(got)}. Nothing was written; the transaction rolls back.`;

export const conflictingDelay = (eventType: string) =>
  `Event "${eventType}" cannot be written to the outbox: give either "deliverAt" or "delayMs", not both.`;

export const invalidHeader = (name: string, got: unknown) =>
  `Outbox header "${name}" must be a string, got ${describe(got)}. Convert it before returning it from "enrich".`;

export const unknownOption = (option: string, suggestion: string | undefined, known: readonly string[]) =>
  `Unknown OutboxModule option "${option}"` +
  (suggestion ? `: did you mean "${suggestion}"?` : `. Known options here: ${known.map((key) => `"${key}"`).join(', ')}.`) +
  ` Misspelled options would otherwise be ignored and their defaults used.`;

export const notAnOptionsObject = (got: unknown) =>
  `OutboxModule.forRoot() needs an options object, got ${describe(got)}. ` +
  `Pass at least the transport, e.g. OutboxModule.forRoot({ transport: 'KAFKA' }), or { relay: false } for a write-only instance; ` +
  `with forRootAsync, make useFactory return that object.`;

export const staticOptionFromFactory = (option: string) =>
  `OutboxModule option "${option}" was returned by the forRootAsync factory, where it comes too late: it decides which ` +
  `entity and providers the module registers when it is declared. Pass it to forRootAsync next to useFactory, ` +
  `e.g. OutboxModule.forRootAsync({ ${option}: …, useFactory, inject }).`;

export const metadataTooLong = (eventType: string, field: string, length: number, limit: number) =>
  `Event "${eventType}" cannot be written to the outbox: ${field} is ${length} characters long, over the limit of ${limit}. ` +
  `Shorten it where it is set (a request header, "enrich" or the explicit API's metadata).`;

export const tooManyHeaders = (eventType: string, count: number, limit: number) =>
  `Event "${eventType}" cannot be written to the outbox: it carries ${count} headers, over the limit of ${limit}. ` +
  `Keep headers for routing and tracing, and put data in the payload.`;

export const invalidIdentifier = (what: string, got: unknown) =>
  `${what} must be an identifier (letters, digits and _, not starting with a digit, at most 63 characters), got ${describe(got)}. ` +
  `It is written into SQL, so nothing else is accepted.`;

export const undecodableRow = (position: string, part: string, cause: string) =>
  `Outbox row ${position} cannot be decoded: its ${part} ${cause}. It was written by hand or by another program, or is corrupt; ` +
  `it is dead-lettered alone. Fix the row and requeue it, or discard it.`;

export const claimedTooOften = (position: string, attempt: number, maxAttempts: number) =>
  `Outbox row ${position} was claimed ${attempt} times, over "maxAttempts" (${maxAttempts}), without an outcome: the relays that took it ` +
  `stopped or lost their lease mid-publish (a crash, a stall, or a message that crashes the process). It is dead-lettered alone; ` +
  `find out why, then requeue or discard it.`;

export const failedTooOften = (
  position: string,
  { failures, capped, last, withoutOutcome, attempt, maxAttempts }: { failures: number; capped: boolean; last: string; withoutOutcome: number; attempt: number; maxAttempts: number },
) =>
  `Outbox row ${position} failed ${capped ? `at least ${failures}` : failures} time(s) with the error recorded (the last: ${JSON.stringify(last.length > 300 ? `${last.slice(0, 300)}…` : last)})` +
  (withoutOutcome > 0 ? ` and was claimed ${withoutOutcome} more time(s) without an outcome (a crash, a stall or a lost lease)` : '') +
  `; this claim would be attempt ${attempt}, over "maxAttempts" (${maxAttempts})` +
  (failures >= maxAttempts ? `, which is lower than when those failures were recorded` : '') +
  `. It is dead-lettered without another attempt; fix the cause in its error history, then requeue it (fresh attempts) or discard it.`;

export const invalidListOption = (option: string, expected: string, got: unknown) =>
  `OutboxAdmin.listDead(): option "${option}" must be ${expected}, got ${describe(got)}. Pass the "position" of the last message of the previous page.`;

function describe(value: unknown): string {
  if (typeof value === 'string') return shownValue(value);
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  return String(value);
}

/** `otherwise` is what to do instead of installing it; by default, turn the option off. */
export const missingOptionalPackage = (packageName: string, option: string, otherwise = `turn "${option}" off`) =>
  `OutboxModule option "${option}" needs the package "${packageName}", which is not installed. ` +
  `Run "npm install ${packageName}", or ${otherwise}.`;

export const metricAlreadyRegistered = (name: string) =>
  `Cannot register the outbox metric "${name}": a metric of that name is already in the prom-client registry ` +
  `(another OutboxModule on the same registry, or one of the app's own). ` +
  `Give this module its own "metrics.prefix", or its own "metrics.registry".`;

export const cqrsAutoCommit = (aggregateType: string) =>
  `Aggregate "${aggregateType}" is a @nestjs/cqrs AggregateRoot with autoCommit on: apply() hands each event to the ` +
  `EventBus at once and keeps none for the outbox. Leave autoCommit off; the outbox commits the events to the aggregate ` +
  `(and so to the EventBus) after the transaction that wrote them commits.`;

export const cannotHandOverEvents = (className: string) =>
  `@PublishesEvents() on ${className}: ${className} has no way to hand its events to the outbox, so they would never be written. ` +
  `Extend OutboxAggregateRoot, or WithOutboxEvents(YourBase) if it already extends a class, ` +
  `or @nestjs/cqrs's AggregateRoot / WithAggregateRoot(YourBase) to record events with apply().`;

export const lockBucketsMissing = (lockTable: string, found: number, expected: number) =>
  `The outbox cannot lock its aggregates: "${lockTable}" returned ${found} of the ${expected} bucket rows asked for, so the events could be ` +
  `published out of commit order, and nothing was written. The migration fills it with 1,024 rows (0-1023): recreate it with ` +
  `createOutboxLocksTableMigration (TypeORM) or the statements of "npx nest-outbox sql --dialect mariadb".`;

export const aggregateLockTimeout = (aggregates: string[]) =>
  `Timed out waiting for the outbox lock of ${aggregates.map((aggregate) => `"${aggregate}"`).join(', ')} ` +
  `(innodb_lock_wait_timeout): another transaction writing events of the same aggregate has held it that long. ` +
  `Keep transactions that write events short; when one also updates the aggregate's row, update the row before adding events.`;

export const noAmbientTransaction = () =>
  `OutboxPublisher.add(messages) was called without an EntityManager and outside any transaction, ` +
  `so the messages would not commit with anything. Call it inside a @Transactional() method ` +
  `(@nestjs-cls/transactional with the TypeORM adapter, or typeorm-transactional), ` +
  `or pass the transaction's manager: add(manager, messages).`;

export const sqliteConnectionWaitTimedOut = (waitedMs: number) =>
  `Waited ${waitedMs} ms for SQLite's connection, which another transaction holds: TypeORM has one connection to SQLite, and the ` +
  `outbox gives it to one transaction at a time so that none nests in another. A wait this long usually means a statement ` +
  `runs outside the transaction that holds the connection while that transaction waits for it: inside a transaction begun with ` +
  `queryRunner.startTransaction(), run every statement through queryRunner.manager, not the DataSource or an injected ` +
  `repository. Otherwise a transaction stays open too long, or a query runner was released without a commit or rollback.`;

export const invalidTransportName = (name: string, problem: string, rule: string) =>
  `OutboxModule option "transports": the transport name ${describe(name)} is refused: ${problem}. A transport name is ${rule}; ` +
  `each row records it in its "transport" column.`;

export const publishedRowsTakenOver = (relay: string, rows: number) =>
  `Outbox relay ${relay}: ${rows} published row(s) had been taken over after the lease expired; ` +
  `they may be published again (at-least-once). Consider a longer leaseMs.`;

export const failedRowsTakenOver = (relay: string, rows: number) =>
  `Outbox relay ${relay}: ${rows} failed row(s) had been taken over after the lease expired; ` +
  `their outcome is the new holder's. A late acknowledgement may still publish them twice (at-least-once).`;
