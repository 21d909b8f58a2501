import { openConnection, type OpenedConnection } from '../../libs/outbox/src/adapters/connection/open-connection';
import { resolveConnectionOption } from '../../libs/outbox/src/adapters/connection/outbox-connection.options';
import { StatementTimeoutError } from '../../libs/outbox/src/adapters/connection/statement-timeout';
import { tenantStatementTimedOut } from '../../libs/outbox/src/adapters/tenants/tenants.messages';
import { requireService } from '../support/services';

const BOUND_MS = 300;
const cases = [
  { server: 'postgres' as const, sleep: 'SELECT pg_sleep(5)' },
  { server: 'mariadb' as const, sleep: 'SELECT SLEEP(5)' },
];

/**
 * The bound on each statement of a tenant's pool, on the real servers: a statement that outlasts it
 * fails with the error naming the tenant and queryTimeoutMs, in autocommit and inside the library's
 * own transaction (where no ROLLBACK is sent to wait behind it), and the connection it ran on is
 * destroyed: were it handed out again, the statements after it would queue behind the 5 s sleep.
 */
describe.each(cases)('a tenant pool\'s statement bound on $server', ({ server, sleep }) => {
  let opened: OpenedConnection;

  beforeAll(() => {
    const target = resolveConnectionOption({ url: requireService(server), poolSize: 2 });
    opened = openConnection(target, { connectTimeoutMs: 2_000, queryTimeout: { ms: BOUND_MS, error: (ms) => tenantStatementTimedOut('acme', ms) } });
  });

  afterAll(() => opened?.close());

  /** Both connections of the pool answer at once: neither is one a timed-out statement still holds. */
  async function poolAnswers(): Promise<void> {
    const started = Date.now();
    for (let i = 0; i < 4; i++) await expect(opened.connection.run({ sql: 'SELECT 1 AS one', params: [] })).resolves.toMatchObject({ records: [{ one: 1 }] });
    expect(Date.now() - started).toBeLessThan(2_000);
  }

  it('fails a statement in autocommit after the bound, naming the tenant, and hands its connection out no more', async () => {
    const started = Date.now();
    const failed = await opened.connection.run({ sql: sleep, params: [] }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(StatementTimeoutError);
    expect((failed as Error).message).toContain(`Tenant "acme": a statement on its database exceeded queryTimeoutMs (${BOUND_MS} ms)`);
    expect(Date.now() - started).toBeLessThan(5_000);
    await poolAnswers();
  });

  it('fails the library\'s own transaction after one bound, sending no ROLLBACK behind the hung statement, and destroys its connection', async () => {
    const started = Date.now();
    const failed = await opened.connection.transaction((run) => run({ sql: sleep, params: [] })).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(StatementTimeoutError);
    // A ROLLBACK sent on that connection would wait behind the sleep (MariaDB: forever, as its timer only starts at the head of the queue).
    expect(Date.now() - started).toBeLessThan(5_000);
    await poolAnswers();
  });
});
