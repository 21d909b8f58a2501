/** Error texts of the `connection` option (the library's own connection, without TypeORM). */

export const connectionNotAnObject = (value: unknown) =>
  `OutboxModule option "connection" must be { url: 'postgres://…' | 'mysql://…' | 'sqlite:<path>' } or { pool } (a pg Pool or a mysql2 pool); got ${describe(value)}.`;

export const connectionUnknownKey = (key: string) =>
  `OutboxModule option "connection.${key}" is not an option. "connection" takes { url, poolSize } (the module opens and closes its own pool) or { pool } (your pool; the module never ends it).`;

export const connectionUrlAndPool = () =>
  `OutboxModule option "connection" has both "url" and "pool": give one. With { url } the module opens a pool of its own and closes it at shutdown; with { pool } it uses yours and leaves it open.`;

export const connectionBadUrl = (url: unknown) =>
  `OutboxModule option "connection.url" must start with postgres:// (or postgresql://), mysql:// (or mariadb://) or sqlite:<path>; got ${describe(url)}.`;

export const connectionBadPoolSize = (value: unknown) =>
  `OutboxModule option "connection.poolSize" must be an integer of at least 2 (the relay's LISTEN on PostgreSQL keeps one connection); got ${describe(value)}. Default 10.`;

export const connectionPoolSizeWithPool = () =>
  `OutboxModule option "connection.poolSize" applies to a pool the module opens from "url"; with "pool", size your own pool instead.`;

export const connectionUnknownPool = (value: unknown) =>
  `OutboxModule option "connection.pool" must be a node-postgres Pool (pg) or a mysql2 pool; got ${describe(value)}. ` +
  `Prisma (PrismaPg), Drizzle, Kysely and MikroORM on PostgreSQL can all be given the pg Pool they sit on; or pass { url } and the module opens one.`;

export const connectionWithDataSource = (dataSource: string) =>
  `OutboxModule options "connection" and "dataSource" ("${dataSource}") exclude each other. "dataSource" names the TypeORM data source the module works on, ` +
  `with @PublishesEvents capture from aggregates; "connection" runs the relay, console, stats and CLI without TypeORM, and then events are added only with ` +
  `OutboxPublisher.add(tx, …) in your data layer's transaction (@PublishesEvents aggregates are not captured). Keep one.`;

export const missingConnectionPackage = (packageName: string, kind: string) =>
  `OutboxModule option "connection" (${kind}) needs the package "${packageName}", which is not installed. Run "npm install ${packageName}".`;

export const connectionWalNeedsPg = (layer: string) =>
  `OutboxModule option delivery: 'wal' streams PostgreSQL's WAL; the "connection" given is ${layer}. Use a postgres:// url or a pg Pool, or delivery: 'table'.`;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.replace(/\/\/[^@/]*@/, '//***@'));
  if (typeof value === 'object') return `an object with keys ${JSON.stringify(Object.keys(value as object))}`;
  return `${typeof value} ${String(value)}`;
}

export const connectionNoSqliteFile = (path: string) =>
  `OutboxModule option "connection.url" points at "${path}", where there is no SQLite database: check the path (the outbox never creates the file; the app's data layer and its migrations do).`;
