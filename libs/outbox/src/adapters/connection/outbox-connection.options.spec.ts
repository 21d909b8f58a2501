import { OutboxConfigurationError } from '../../core/outbox.errors';
import { loadDataLayer } from '../load-data-layer';
import { missingConnectionPackage } from './connection.messages';
import { resolveConnectionOption } from './outbox-connection.options';

describe('the connection option', () => {
  const refusal = (value: unknown) => {
    try {
      resolveConnectionOption(value);
    } catch (error) {
      expect(error).toBeInstanceOf(OutboxConfigurationError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('takes a URL per database family, mariadb:// as mysql://, with a pool size of 10 unless set', () => {
    expect(resolveConnectionOption({ url: 'postgres://u@h/db' })).toEqual({ kind: 'url', family: 'postgres', url: 'postgres://u@h/db', location: 'postgres://u@h/db', poolSize: 10 });
    expect(resolveConnectionOption({ url: 'mariadb://u@h/db', poolSize: 4 })).toMatchObject({ family: 'mariadb', url: 'mysql://u@h/db', poolSize: 4 });
    expect(resolveConnectionOption({ url: 'sqlite:/tmp/app.sqlite' })).toMatchObject({ family: 'sqlite', location: '/tmp/app.sqlite' });
  });

  it('tells a pg Pool from a mysql2 pool by shape, and turns a callback mysql2 pool into its promise form', () => {
    const pg = { connect: jest.fn(), query: jest.fn(), totalCount: 0 };
    expect(resolveConnectionOption({ pool: pg })).toEqual({ kind: 'pg-pool', pool: pg });
    const promised = { getConnection: jest.fn(), query: jest.fn() };
    expect(resolveConnectionOption({ pool: { getConnection: jest.fn(), query: jest.fn(), promise: () => promised } })).toEqual({ kind: 'mysql2-pool', pool: promised });
  });

  it.each([
    ['not an object', 'postgres://h/db', /must be \{ url/],
    ['an unknown key', { uri: 'postgres://h/db' }, /"connection.uri" is not an option/],
    ['both url and pool', { url: 'postgres://h/db', pool: {} }, /both "url" and "pool"/],
    ['an unknown scheme (the password masked)', { url: 'oracle://scott:tiger@h/db' }, /"connection.url" must start with.*oracle:\/\/\*\*\*@h\/db/],
    ['a pool size under 2', { url: 'postgres://h/db', poolSize: 1 }, /"connection.poolSize" must be an integer of at least 2/],
    ['a pool size with a pool', { pool: { connect() {}, query() {}, totalCount: 0 }, poolSize: 3 }, /applies to a pool the module opens/],
    ['something that is no pool', { pool: { query() {} } }, /must be a node-postgres Pool \(pg\) or a mysql2 pool/],
  ])('refuses %s, naming the option', (_, value, message) => {
    const text = refusal(value);
    expect(text).toMatch(message);
    expect(text).not.toContain('tiger');
  });

  it('names the missing driver package and how to install it', () => {
    expect(() => loadDataLayer('nest-outbox-no-such-driver', 'a postgres:// url', missingConnectionPackage)).toThrow(
      'OutboxModule option "connection" (a postgres:// url) needs the package "nest-outbox-no-such-driver", which is not installed. Run "npm install nest-outbox-no-such-driver".',
    );
  });
});
