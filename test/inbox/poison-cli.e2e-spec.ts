import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { CreateInboxPoisonTable, CreateInboxTable } from '@nest-outbox/outbox';
import { TypeOrmPoisonStore } from '@nest-outbox/outbox/typeorm';
import { runCli } from '../../libs/outbox/src/cli/outbox-cli';

/** `nest-outbox poison …` against a real SQLite file written by the inbox's own store. */
describe('nest-outbox poison commands (SQLite)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-poison-cli-'));
  const file = join(dir, 'app.sqlite');
  let dataSource: DataSource;
  let store: TypeOrmPoisonStore;

  beforeAll(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: file, migrations: [CreateInboxTable, CreateInboxPoisonTable], migrationsRun: true, logging: false });
    await dataSource.initialize();
    store = new TypeOrmPoisonStore(dataSource, 'outbox_inbox_poison', 'outbox_inbox');
    await store.countFailure({ consumer: 'billing', key: 'm-1', messageId: 'm-1', raw: '{"id":"m-1","type":"t"}', truncated: false, reason: 'handler failed: boom' }, 1);
    await store.countFailure({ consumer: 'billing', key: 'raw:abc', raw: '"garbage"', truncated: false, reason: 'not an outbox envelope: got a string' }, 1);
    await store.countFailure({ consumer: 'shipping', key: 'm-2', messageId: 'm-2', raw: '{"id":"m-2","type":"t"}', truncated: false, reason: 'handler failed: slow' }, 5);
  });

  afterAll(async () => {
    await dataSource?.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli([...args, '--url', `sqlite:${file}`], { out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('lists and filters records, shows one', async () => {
    const all = await cli('poison', 'list');
    expect(all.code).toBe(0);
    expect(all.out.split('\n')).toHaveLength(3);
    const failing = await cli('poison', 'list', '--state', 'failing', '--json');
    expect(JSON.parse(failing.out)).toEqual([expect.objectContaining({ consumer: 'shipping', key: 'm-2', state: 'failing', attempts: 1 })]);
    const billing = await cli('poison', 'list', '--consumer', 'billing');
    expect(billing.out).toMatch(/^billing\t(m-1|raw:abc)\tset-aside\t1 attempts\t/);
    const shown = await cli('poison', 'show', 'billing', 'm-1');
    expect(JSON.parse(shown.out)).toMatchObject({ consumer: 'billing', key: 'm-1', messageId: 'm-1', raw: '{"id":"m-1","type":"t"}', reason: 'handler failed: boom' });
  });

  it('requests a replay, refuses one for an undecodable record, deletes', async () => {
    const replay = await cli('poison', 'replay', 'billing', 'm-1');
    expect(replay).toMatchObject({ code: 0, out: expect.stringContaining('Replay of billing / m-1 requested') });
    expect((await store.get('billing', 'm-1'))?.state).toBe('replay-requested');
    const refused = await cli('poison', 'replay', 'billing', 'raw:abc');
    expect(refused).toMatchObject({ code: 2, err: expect.stringContaining('cannot be replayed: it could not be decoded (not an outbox envelope: got a string)') });
    expect(await cli('poison', 'delete', 'billing', 'raw:abc')).toMatchObject({ code: 0 });
    expect(await store.get('billing', 'raw:abc')).toBeUndefined();
    expect(await cli('poison', 'delete', 'billing', 'raw:abc')).toMatchObject({ code: 2, err: expect.stringContaining('No poison record') });
  });

  it('refuses bad input before touching the database, naming it', async () => {
    expect(await cli('poison', 'list', '--state', 'dead')).toMatchObject({ code: 2, err: expect.stringContaining('--state must be one of failing, set-aside, replay-requested') });
    expect(await cli('poison', 'show', 'bill\u0000ing', 'm-1')).toMatchObject({ code: 2, err: expect.stringContaining('without control characters') });
    expect(await cli('poison', 'show', 'billing')).toMatchObject({ code: 2, err: expect.stringContaining('needs a consumer and a record key') });
    expect(await cli('poison', 'list', '--poison-table', 'x;drop')).toMatchObject({ code: 2, err: expect.stringContaining('--poison-table must be a plain table name') });
    expect(await cli('poison', 'purge')).toMatchObject({ code: 2, err: expect.stringContaining('"poison" needs list, show, replay or delete') });
  });
});
