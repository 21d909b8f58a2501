import { DataSource, type DataSourceOptions } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable, CreateOutboxTable } from '@nest-outbox/outbox';
import { TypeOrmPoisonStore } from '@nest-outbox/outbox/typeorm';
import { runCli } from '../../libs/outbox/src/cli/outbox-cli';
import { isolatedDatabase } from '../support/outbox-harness';

/** `nest-outbox status` shows the inbox's poison records, per consumer, once their table exists. */
describe.each(['sqlite', 'postgres'] as const)('nest-outbox status: poison records (%s)', (database) => {
  let isolated: Awaited<ReturnType<typeof isolatedDatabase>>;
  let dataSource: DataSource;
  let connection: string[];

  beforeAll(async () => {
    isolated = await isolatedDatabase(database);
    dataSource = new DataSource({ ...isolated.options, migrations: [CreateOutboxTable], migrationsRun: true, logging: false } as DataSourceOptions);
    await dataSource.initialize();
    if (database === 'sqlite') {
      connection = ['--url', `sqlite:${(isolated.options as { database: string }).database}`];
    } else {
      // The CLI reaches the schema as the app does: the outbox table by --schema, the inbox's tables on the search_path.
      const { url, schema } = isolated.options as { url: string; schema: string };
      const withPath = new URL(url);
      withPath.searchParams.set('options', `-c search_path=${schema}`);
      connection = ['--url', withPath.toString(), '--schema', schema];
    }
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await isolated?.drop();
  });

  async function status(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['status', ...args, ...connection], { out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('says nothing of poison without the table, then counts what waits set aside per consumer', async () => {
    const without = await status();
    expect(without).toMatchObject({ code: 0, err: '' });
    expect(without.out).toContain('pending 0');
    expect(without.out).not.toContain('poison');
    expect(JSON.parse((await status('--json')).out)).not.toHaveProperty('poison');

    const runner = dataSource.createQueryRunner();
    await new CreateInboxTable().up(runner);
    await new CreateInboxPoisonTable().up(runner);
    await runner.release();
    const store = new TypeOrmPoisonStore(dataSource, 'outbox_inbox_poison', 'outbox_inbox');
    const failure = (consumer: string, id: string) => ({ consumer, key: id, messageId: id, raw: `{"id":"${id}"}`, truncated: false, reason: 'handler failed: boom' });
    await store.countFailure(failure('billing', 'm-1'), 1);
    await store.countFailure(failure('billing', 'm-2'), 1);
    await store.countFailure(failure('shipping', 'm-3'), 5);
    expect(await store.requestReplay('billing', 'm-2')).toBe(true);

    const text = await status();
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^poison set aside 2 {2}oldest \d+\.\d s$/m);
    expect(text.out).toMatch(/^ {2}poison billing: set aside 2 \(replay requested 1\), failing 0, oldest \d+\.\d s$/m);
    expect(text.out).toMatch(/^ {2}poison shipping: set aside 0 \(replay requested 0\), failing 1, oldest -$/m);
    expect(text.out).toMatch(/OK$/);

    const json = JSON.parse((await status('--json')).out);
    expect(json.ok).toBe(true);
    expect(json.poison).toEqual({
      waiting: 2,
      oldestWaitingAgeMs: expect.any(Number),
      consumers: [
        { consumer: 'billing', failing: 0, waiting: 2, replayRequested: 1, oldestWaitingAgeMs: expect.any(Number) },
        { consumer: 'shipping', failing: 1, waiting: 0, replayRequested: 0, oldestWaitingAgeMs: null },
      ],
    });
    expect(json.poison.oldestWaitingAgeMs).toBeGreaterThanOrEqual(0);
    expect(json.poison.oldestWaitingAgeMs).toBeLessThan(60_000);
  });

  it('refuses a bad --poison-table before connecting, naming it', async () => {
    expect(await status('--poison-table', 'x;drop')).toMatchObject({ code: 2, err: expect.stringContaining('--poison-table must be a plain table name') });
  });
});
