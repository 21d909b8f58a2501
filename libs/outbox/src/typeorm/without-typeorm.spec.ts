/** What `require('typeorm')` throws in an app that does not have it. */
const notInstalled = () => {
  throw Object.assign(new Error("Cannot find module 'typeorm'"), { code: 'MODULE_NOT_FOUND' });
};

describe('the TypeORM adapter without typeorm installed', () => {
  afterEach(() => {
    jest.dontMock('typeorm');
    jest.resetModules();
  });

  it('loads, and fails only when a piece is used, naming typeorm and the connection option', () => {
    jest.doMock('typeorm', notInstalled);
    jest.isolateModules(() => {
      const { outboxMessageEntity, createOutboxTableMigration } = require('./index') as typeof import('./index');
      const { OutboxConfigurationError } = require('../core/outbox.errors') as typeof import('../core/outbox.errors');
      expect(createOutboxTableMigration('outbox_x')).toEqual(expect.any(Function));
      expect(() => outboxMessageEntity('outbox_x')).toThrow(OutboxConfigurationError);
      expect(() => outboxMessageEntity('outbox_x')).toThrow(
        'outboxMessageEntity() is part of the TypeORM adapter and needs the package "typeorm", which is not installed. ' +
          'Run "npm install typeorm", or pass the "connection" option ({ url } or { pool }) to run without TypeORM (docs/data-layers.md).',
      );
    });
  });

  it('builds the entity from the app’s typeorm when it is there', () => {
    jest.isolateModules(() => {
      const { outboxMessageEntity } = require('./index') as typeof import('./index');
      const { EntitySchema } = require('typeorm') as typeof import('typeorm');
      expect(outboxMessageEntity('outbox_y')).toBeInstanceOf(EntitySchema);
    });
  });
});
