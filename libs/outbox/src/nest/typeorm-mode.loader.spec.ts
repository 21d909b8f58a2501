import { OutboxConfigurationError } from '../core/outbox.errors';
import { loadDataLayers } from '../adapters/load-data-layer';
import { typeOrmModeNotInstalled } from '../adapters/typeorm/typeorm.messages';
import { loadTypeOrmMode } from './typeorm-mode.loader';

describe('TypeORM as an optional peer', () => {
  it('loads @nestjs/typeorm when the app has both packages', () => {
    expect(loadTypeOrmMode('OutboxModule').TypeOrmModule.forFeature).toEqual(expect.any(Function));
  });

  it('names every missing package at once, the module, and the way without TypeORM', () => {
    const missing = (names: string[]) => typeOrmModeNotInstalled('OutboxInboxModule', names);
    expect(() => loadDataLayers(['@nest-outbox/no-typeorm', '@nest-outbox/no-nest-typeorm'], missing)).toThrow(OutboxConfigurationError);
    expect(() => loadDataLayers(['@nest-outbox/no-typeorm', '@nest-outbox/no-nest-typeorm'], missing)).toThrow(
      'OutboxInboxModule without the "connection" option runs on a TypeORM data source, and "@nest-outbox/no-typeorm" and "@nest-outbox/no-nest-typeorm" are not installed. ' +
        'Run "npm install @nest-outbox/no-typeorm @nest-outbox/no-nest-typeorm", or pass the "connection" option ({ url } or { pool }) to run without TypeORM (docs/data-layers.md).',
    );
  });

  it('names only the package that is missing', () => {
    expect(() => loadDataLayers(['typeorm', '@nest-outbox/no-nest-typeorm'], (names) => typeOrmModeNotInstalled('OutboxModule', names))).toThrow(
      /and "@nest-outbox\/no-nest-typeorm" is not installed\. Run "npm install @nest-outbox\/no-nest-typeorm"/,
    );
  });

  describe('with neither package installed', () => {
    const notInstalled = (name: string) => () => {
      throw Object.assign(new Error(`Cannot find module '${name}'`), { code: 'MODULE_NOT_FOUND' });
    };

    afterEach(() => {
      jest.dontMock('typeorm');
      jest.dontMock('@nestjs/typeorm');
      jest.resetModules();
    });

    it('declares the modules with `connection`, and refuses them without it, naming both packages', () => {
      jest.doMock('typeorm', notInstalled('typeorm'));
      jest.doMock('@nestjs/typeorm', notInstalled('@nestjs/typeorm'));
      jest.isolateModules(() => {
        const { OutboxModule, OutboxInboxModule } = require('../index') as typeof import('../index');
        const connection = { url: 'postgres://app@localhost:5432/app' };
        expect(OutboxModule.forRoot({ connection }).providers?.length).toBeGreaterThan(0);
        expect(OutboxInboxModule.forRoot({ connection }).providers?.length).toBeGreaterThan(0);
        expect(() => OutboxModule.forRoot({})).toThrow(
          'OutboxModule without the "connection" option runs on a TypeORM data source, and "typeorm" and "@nestjs/typeorm" are not installed. Run "npm install typeorm @nestjs/typeorm"',
        );
        expect(() => OutboxInboxModule.forRoot({})).toThrow('OutboxInboxModule without the "connection" option runs on a TypeORM data source');
      });
    });
  });
});
