// Error texts of the data-layer write path: each names what was passed and what to do instead.

export const notInTransaction = (layer: string, passed: string, fix: string) =>
  `OutboxPublisher.add() / OutboxDataLayerInbox.process() got ${passed} (${layer}) that is not inside a transaction, so what they write would commit with nothing. ${fix}`;

export const unknownTransaction = (passed: string, accepted: readonly string[]) =>
  `OutboxPublisher.add() / OutboxDataLayerInbox.process() cannot write through ${passed}: it is no transaction of a data layer the outbox knows. ` +
  `Pass one of: ${accepted.join('; ')}.`;

export const mariaDbNotOffered = (layer: string) =>
  `The outbox cannot write through a ${layer} transaction on MariaDB/MySQL yet: it keeps an aggregate's events in commit order ` +
  `with GET_LOCK, a lock of the session that must be released when the transaction ends, and a transaction opened by ${layer} ` +
  `gives the outbox no way to learn when that is. Write these events through TypeORM (an EntityManager in a transaction), ` +
  `or use PostgreSQL or SQLite with ${layer}.`;

export const unknownDialect = (layer: string, found: string, supported = 'PostgreSQL, SQLite') =>
  `The outbox cannot write through this ${layer} transaction: it is not on a database the outbox offers for ${layer} ` +
  `(found "${found}"; offered: ${supported}).`;

export const missingDataLayerPackage = (packageName: string, layer: string) =>
  `Writing outbox messages through a ${layer} transaction needs the package "${packageName}", which is not installed. ` +
  `Run "npm install ${packageName}" (the same copy your app's ${layer} code uses).`;

export const inboxNotOffered = (layer: string) =>
  `OutboxDataLayerInbox.process() cannot record messages through a ${layer} transaction on MariaDB/MySQL yet. ` +
  `Use OutboxInbox.process() there (on a TypeORM data source, or with OutboxInboxModule's "connection" option on a mysql2 pool), or PostgreSQL or SQLite with ${layer}.`;
