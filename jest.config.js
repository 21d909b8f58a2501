// Nest 12 ships ES modules only; @swc/jest compiles them (and their ESM-only dependencies)
// to CommonJS together with our TypeScript, which keeps decorators' metadata working.
const esmPackages = ['@nestjs', 'file-type', 'strtok3', 'token-types', '@tokenizer', 'uint8array-extras', 'load-esm', 'uuid', 'kysely', '@mikro-orm'];

// The subpath exports of libs/outbox/package.json, each an index.ts in the folder of that name.
const subpaths = ['testing', 'console', 'observability', 'core', 'typeorm', 'migrations', 'kafka', 'asyncapi', 'tenants'];

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(${esmPackages.join('|')})/)`],
  // The package's entry points (package.json "exports"), resolved to the library's source.
  moduleNameMapper: {
    '^@nest-outbox/outbox$': '<rootDir>/libs/outbox/src/index.ts',
    [`^@nest-outbox/outbox/(${subpaths.join('|')})$`]: '<rootDir>/libs/outbox/src/$1/index.ts',
  },
  // The packaging test's fresh app (installed from the tarball) is not part of the suite; nor is
  // the services' state: with wal_level=logical, PostgreSQL writes pg_logical/snapshots/*.snap
  // there, which jest would take for obsolete snapshot files and fail the run.
  modulePathIgnorePatterns: ['<rootDir>/test/packaging/.app-', '<rootDir>/test/asyncapi/.build-', '<rootDir>/.services'],
};

module.exports = {
  rootDir: __dirname,
  // Integration tests wait for brokers with their own deadlines; this is the outer bound.
  testTimeout: 90_000,
  projects: [
    // test/chaos: the chaos ledger's analysis and its self tests, on made-up histories (no services).
    { ...common, displayName: 'unit', rootDir: __dirname, testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/test/chaos/**/*.spec.ts'] },
    { ...common, displayName: 'integration', rootDir: __dirname, testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
