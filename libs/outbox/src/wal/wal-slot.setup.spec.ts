import { OutboxConfigurationError } from '../core/outbox.errors';
import { prepareWalSlot, type WalQuery } from './wal-slot.setup';

// A scripted server: the refusals are checked here; the real server's answers are in test/wal/.
type Answers = {
  level?: string;
  allowed?: boolean;
  slotPlugin?: string;
  slotDatabase?: string;
  walStatus?: string;
  savedPosition?: string;
  createError?: string;
  publicationError?: string;
  addTableError?: string;
  tablePublished?: boolean;
};

function server(answers: Answers): { query: WalQuery; statements: string[] } {
  const statements: string[] = [];
  let dropped = false;
  const query: WalQuery = async (sql) => {
    statements.push(sql);
    if (sql.includes('wal_level')) return [{ level: answers.level ?? 'logical' }];
    if (sql.includes('rolreplication')) return [{ name: 'app', allowed: answers.allowed ?? true }];
    if (sql.includes('pg_drop_replication_slot')) return (dropped = true), [{}];
    if (sql.includes('FROM pg_replication_slots')) {
      return answers.slotPlugin && !dropped ? [{ plugin: answers.slotPlugin, database: answers.slotDatabase ?? 'app', here: 'app', walStatus: answers.walStatus ?? 'reserved' }] : [];
    }
    if (sql.includes('confirmed_lsn::text')) return answers.savedPosition ? [{ lsn: answers.savedPosition }] : [];
    if (sql.includes('pg_create_logical_replication_slot') && answers.createError) throw new Error(answers.createError);
    if (sql.includes('pg_create_logical_replication_slot')) return [{ lsn: '0/2000060' }];
    if (sql.includes('released')) return [{ released: 3 }];
    if (sql.includes('CREATE PUBLICATION') && answers.publicationError) throw new Error(answers.publicationError);
    if (sql.includes('ADD TABLE') && answers.addTableError) throw new Error(answers.addTableError);
    if (sql.includes('pg_publication_rel')) return answers.tablePublished ? [{ member: true, exact: true }] : [{ member: false, exact: false }];
    return [];
  };
  return { query, statements };
}

const names = { slotName: 'outbox_s', publicationName: 'outbox_s' };

describe('prepareWalSlot', () => {
  it('refuses wal_level replica, naming the setting and the restart it needs', async () => {
    const error = await prepareWalSlot(server({ level: 'replica' }).query, names).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxConfigurationError);
    expect(String(error)).toContain('wal_level = replica');
    expect(String(error)).toContain('restart the server');
  });

  it('refuses a role without REPLICATION, naming the ALTER ROLE to run', async () => {
    await expect(prepareWalSlot(server({ allowed: false }).query, names)).rejects.toThrow('ALTER ROLE "app" REPLICATION');
  });

  it('lets a write-only instance without REPLICATION start once the slot exists, and refuses it before', async () => {
    await expect(prepareWalSlot(server({ allowed: false, slotPlugin: 'pgoutput' }).query, names, { streams: false })).resolves.toBeUndefined();
    await expect(prepareWalSlot(server({ allowed: false }).query, names, { streams: false })).rejects.toThrow('Start an instance that relays first');
  });

  it('refuses when no slot is free, naming max_replication_slots', async () => {
    await expect(prepareWalSlot(server({ createError: 'all replication slots are in use' }).query, names)).rejects.toThrow('max_replication_slots');
  });

  it('takes a publication another instance created at the same moment, and passes other failures on', async () => {
    // What PostgreSQL 15 answers the second of two concurrent CREATE PUBLICATIONs (seen in the WAL chaos run).
    const race = 'duplicate key value violates unique constraint "pg_publication_pubname_index"';
    const raced = server({ publicationError: race });
    await expect(prepareWalSlot(raced.query, names)).resolves.toMatchObject({ reason: 'first' });
    expect(raced.statements.some((s) => s.includes('pg_create_logical_replication_slot'))).toBe(true);
    await expect(prepareWalSlot(server({ publicationError: 'permission denied for database outbox' }).query, names)).rejects.toThrow('permission denied');
  });

  it('refuses an existing slot of another plugin', async () => {
    await expect(prepareWalSlot(server({ slotPlugin: 'test_decoding' }).query, names)).rejects.toThrow('decodes with "test_decoding"');
  });

  it('creates the publication and the slot the first time, and keeps an existing slot', async () => {
    const first = server({});
    await prepareWalSlot(first.query, names);
    expect(first.statements.filter((s) => /CREATE PUBLICATION|pg_create_logical_replication_slot/.test(s))).toHaveLength(2);
    const again = server({ slotPlugin: 'pgoutput' });
    await prepareWalSlot(again.query, names);
    expect(again.statements.some((s) => s.includes('pg_create_logical_replication_slot'))).toBe(false);
  });
  it('puts the outbox table in the publication (inserts and updates) once, and names the ALTER to run when refused', async () => {
    const table = '"app"."outbox_messages"';
    const first = server({});
    await prepareWalSlot(first.query, names, { streams: true, tables: [table] });
    expect(first.statements.filter((s) => s.startsWith('ALTER PUBLICATION'))).toEqual([
      `ALTER PUBLICATION "outbox_s" ADD TABLE ${table}`,
      `ALTER PUBLICATION "outbox_s" SET (publish = 'insert, update')`,
    ]);
    const again = server({ tablePublished: true, slotPlugin: 'pgoutput' });
    await prepareWalSlot(again.query, names, { streams: true, tables: [table] });
    expect(again.statements.filter((s) => s.startsWith('ALTER PUBLICATION'))).toEqual([]);
    const refused = await prepareWalSlot(server({ addTableError: 'must be owner of table outbox_messages' }).query, names, { streams: true, tables: [table] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OutboxConfigurationError);
    expect(String(refused)).toContain('must be owner of table outbox_messages');
    expect(String(refused)).toContain(`ALTER PUBLICATION "outbox_s" ADD TABLE ${table}`);
  });

  const positions = { create: [], read: 'SELECT confirmed_lsn::text AS lsn FROM p WHERE slot_name = $1', forget: 'DELETE FROM p WHERE slot_name = $1' };
  const releaseRows = { sql: 'WITH released AS (UPDATE …) SELECT count(*) AS released FROM released', params: [] };

  it("refuses a slot of that name that another database made, naming both databases and wal.slotName", async () => {
    const error = await prepareWalSlot(server({ slotPlugin: 'pgoutput', slotDatabase: 'orders' }).query, names).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboxConfigurationError);
    expect(String(error)).toMatch(/belongs to the database "orders", not to "app".*wal: \{ slotName/s);
  });

  it('makes a slot anew when a position was saved for a former one, and lets go of the rows (write row)', async () => {
    const missing = server({ savedPosition: '0/16B3748' });
    await expect(prepareWalSlot(missing.query, names, { streams: true, write: 'row', positions, releaseRows })).resolves.toEqual({
      reason: 'missing',
      formerPosition: 0x16b3748n,
      startsAt: 0x2000060n,
      releasedRows: 3,
    });
    expect(missing.statements.findIndex((s) => s.includes('released'))).toBeGreaterThan(missing.statements.findIndex((s) => s.includes('pg_create_logical_replication_slot')));
    await expect(prepareWalSlot(server({}).query, names, { streams: true, positions })).resolves.toMatchObject({ reason: 'first', releasedRows: 0 });
  });

  it('drops a slot the server invalidated and makes it anew; a write-only instance writing messages is refused there', async () => {
    const lost = server({ slotPlugin: 'pgoutput', walStatus: 'lost' });
    await expect(prepareWalSlot(lost.query, names, { streams: true, positions })).resolves.toMatchObject({ reason: 'invalidated' });
    expect(lost.statements.some((s) => s.includes('pg_drop_replication_slot'))).toBe(true);
    await expect(prepareWalSlot(server({ slotPlugin: 'pgoutput', walStatus: 'lost' }).query, names, { streams: false })).rejects.toThrow('was invalidated by the server');
  });

  it('lets a write-only instance writing rows start without a slot, and without REPLICATION', async () => {
    const writer = server({ allowed: false });
    await expect(prepareWalSlot(writer.query, names, { streams: false, write: 'row' })).resolves.toBeUndefined();
    expect(writer.statements.some((s) => s.includes('pg_create_logical_replication_slot'))).toBe(false);
  });
});
