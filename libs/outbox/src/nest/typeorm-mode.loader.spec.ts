import { OutboxConfigurationError } from '../core/outbox.errors';
import { loadDataLayers } from '../adapters/load-data-layer';
import { typeOrmModeNotInstalled } from '../typeorm/typeorm.messages';
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
});
