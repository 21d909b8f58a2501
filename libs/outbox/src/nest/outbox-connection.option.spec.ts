import { OutboxConfigurationError } from '../core/outbox.errors';
import { OutboxModule } from './outbox.module';

describe('OutboxModule.forRoot({ connection })', () => {
  const transport = { name: 'recording', publish: async () => undefined };

  it('refuses connection next to dataSource where the module is declared, saying what each one does', () => {
    const declare = () => OutboxModule.forRoot({ connection: { url: 'postgres://h/db' }, dataSource: 'orders', transport });
    expect(declare).toThrow(OutboxConfigurationError);
    expect(declare).toThrow(/"connection" and "dataSource" \("orders"\) exclude each other.*@PublishesEvents aggregates are not captured/);
  });

  it('refuses a bad connection before anything connects', () => {
    expect(() => OutboxModule.forRoot({ connection: { url: 'ftp://h/db' }, transport })).toThrow(/"connection.url" must start with/);
  });

  it('registers nothing of TypeORM with a connection, and the TypeORM feature without one', () => {
    const imports = (options: Parameters<typeof OutboxModule.forRoot>[0]) => (OutboxModule.forRoot(options).imports ?? []).map((module) => (module as { module?: { name: string } }).module?.name);
    expect(imports({ connection: { url: 'postgres://h/db' }, transport })).not.toContain('TypeOrmModule');
    expect(imports({ transport })).toContain('TypeOrmModule');
  });
});
