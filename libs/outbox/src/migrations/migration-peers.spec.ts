import { OutboxConfigurationError } from '../core/outbox.errors';
import { outboxKyselyMigration } from './kysely-migration';
import { outboxMikroOrmMigration } from './mikro-orm-migration';

// As an app without these optional peers installed sees them (jest hoists these above the imports).
jest.mock('@mikro-orm/migrations', () => {
  throw Object.assign(new Error("Cannot find module '@mikro-orm/migrations'"), { code: 'MODULE_NOT_FOUND' });
});
jest.mock('kysely', () => {
  throw Object.assign(new Error("Cannot find module 'kysely'"), { code: 'MODULE_NOT_FOUND' });
});

describe('the migration forms without their optional peer', () => {
  it('MikroORM: refuses when the class is asked for, naming the package to install', () => {
    expect(() => outboxMikroOrmMigration({ dialect: 'postgres' })).toThrow(OutboxConfigurationError);
    expect(() => outboxMikroOrmMigration({ dialect: 'postgres' })).toThrow(/outboxMikroOrmMigration needs the package "@mikro-orm\/migrations".*npm install @mikro-orm\/migrations/);
  });

  it('Kysely: builds the migration, and its up refuses naming kysely, running nothing', async () => {
    const executeQuery = jest.fn();
    const migration = outboxKyselyMigration({ dialect: 'sqlite' });
    await expect(migration.up({ executeQuery })).rejects.toThrow(/outboxKyselyMigration needs the package "kysely"/);
    expect(executeQuery).not.toHaveBeenCalled();
  });
});
