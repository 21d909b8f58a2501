// Error texts of the data-layer write path: each names what was passed and what to do instead.

export const notInTransaction = (layer: string, passed: string, fix: string) =>
  `OutboxPublisher.add() / OutboxDataLayerInbox.process() got ${passed} (${layer}) that is not inside a transaction, so what they write would commit with nothing. ${fix}`;

export const unknownTransaction = (passed: string, accepted: readonly string[]) =>
  `OutboxPublisher.add() / OutboxDataLayerInbox.process() cannot write through ${passed}: it is no transaction of a data layer the outbox knows. ` +
  `Pass one of: ${accepted.join('; ')}.`;

export const unknownDialect = (layer: string, found: string, supported = 'PostgreSQL, MariaDB/MySQL, SQLite') =>
  `The outbox cannot write through this ${layer} transaction: it is not on a database the outbox offers for ${layer} ` +
  `(found "${found}"; offered: ${supported}).`;

export const missingDataLayerPackage = (packageName: string, layer: string) =>
  `Writing outbox messages through a ${layer} transaction needs the package "${packageName}", which is not installed. ` +
  `Run "npm install ${packageName}" (the same copy your app's ${layer} code uses).`;

export const affectedRowsUnknown = (layer: string) =>
  `OutboxDataLayerInbox.process() cannot tell on MariaDB/MySQL whether it recorded the message: the ${layer} transaction's execute() ` +
  `resolved without the number of rows the INSERT changed, so a duplicate and a first delivery look alike. ` +
  `Make execute() resolve with the affected-row count (mysql2: result.affectedRows).`;
