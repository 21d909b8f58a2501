/** Texts of the migrations in each data layer's form and of `nest-outbox sql`. */

export const badDdlDialect = (dialect: unknown) => `The outbox DDL's "dialect" must be postgres, mariadb or sqlite; got ${JSON.stringify(dialect ?? null)}.`;

export const badDdlTables = (tables: unknown) =>
  `The outbox DDL's "tables" must list one or more of outbox, inbox, poison; got ${JSON.stringify(tables ?? null)}.`;

export const missingMigrationsPackage = (packageName: string, migration: string) =>
  `${migration} needs the package "${packageName}", which is not installed. Run "npm install ${packageName}" (the version your app's migrations run with).`;
