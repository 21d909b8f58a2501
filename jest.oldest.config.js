// The same tests against the oldest versions inside the library's peer ranges (NestJS 11, TypeORM
// 0.3, and the oldest @nestjs/cqrs, @nestjs/terminus, @opentelemetry/api and prom-client), installed by scripts/test-oldest-majors.sh in .oldest/. Every import of those packages is
// mapped there, so the library, the tests and the packages' own imports all see one copy.
const path = require('node:path');
const base = require('./jest.config');

const oldest = path.join(__dirname, '.oldest', 'node_modules');
const mapped = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/microservices',
  '@nestjs/testing',
  '@nestjs/typeorm',
  'typeorm',
  // optional peers, at the oldest version of their range
  '@nestjs/cqrs',
  '@nestjs/terminus',
  '@opentelemetry/api',
  'prom-client',
];
const escape = (name) => name.replace(/[/.]/g, (c) => `\\${c}`);

const project = (name, testMatch) => {
  const common = base.projects.find((p) => p.displayName === name);
  return {
    ...common,
    displayName: `${name} (oldest majors)`,
    testMatch,
    moduleNameMapper: {
      ...common.moduleNameMapper,
      ...Object.fromEntries(mapped.map((pkg) => [`^${escape(pkg)}(/.*)?$`, `${oldest}/${pkg}$1`])),
    },
  };
};

module.exports = {
  ...base,
  projects: [
    project('unit', ['<rootDir>/libs/outbox/src/core/**/*.spec.ts', '<rootDir>/libs/outbox/src/testing/**/*.spec.ts']),
    project('integration', [
      '<rootDir>/test/outbox.postgres.e2e-spec.ts',
      '<rootDir>/test/outbox.sqlite.e2e-spec.ts',
      '<rootDir>/test/outbox.mariadb.e2e-spec.ts',
      '<rootDir>/test/outbox-module.startup.e2e-spec.ts',
      '<rootDir>/test/outbox-observability.startup.e2e-spec.ts',
      '<rootDir>/test/unchanged-saves.e2e-spec.ts',
      '<rootDir>/test/cqrs-aggregates.e2e-spec.ts',
      // Leans on TypeORM's SQLite query runner, whose internals may differ between majors.
      '<rootDir>/test/sqlite/concurrent-transactions.e2e-spec.ts',
      // runMigrationsUnderLock on TypeORM 0.3's query runners and better-sqlite3 driver.
      '<rootDir>/test/startup/migration-lock.e2e-spec.ts',
    ]),
  ],
};
