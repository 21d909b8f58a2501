import { join } from 'node:path';
import { runCli } from '../../libs/outbox/src/cli/outbox-cli';
import { OutboxTable } from '../../libs/outbox/src/sql/dialects/outbox-table';
import { tableDialectFor } from '../../libs/outbox/src/sql/outbox-sql.factory';
import { postgresAdmin, privatePostgresSchema } from '../support/databases';
import { ORDER_V1, schemasApp } from './fixtures/schemas-app';

const app = join(__dirname, 'fixtures', 'schemas-app.ts');

async function cli(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line), env: {} });
  return { code, out, err };
}

/** `nest-outbox schemas check`, as a CI job runs it: the app loaded in describe mode, the registry its options name. */
describe('nest-outbox schemas check', () => {
  const { registry } = schemasApp;
  let database: Awaited<ReturnType<typeof privatePostgresSchema>>;

  beforeAll(async () => {
    database = await privatePostgresSchema('schemas_cli');
    const table = OutboxTable.on('postgres', { tableName: 'outbox_messages', schema: database.schema });
    for (const sql of tableDialectFor('postgres', table).createTable()) await postgresAdmin(database.url, sql);
    process.env.SCHEMAS_APP_DATABASE_URL = database.url;
    process.env.SCHEMAS_APP_SCHEMA = database.schema;
  });
  afterEach(() => {
    schemasApp.orderSchema = ORDER_V1;
  });
  afterAll(async () => {
    delete process.env.SCHEMAS_APP_DATABASE_URL;
    delete process.env.SCHEMAS_APP_SCHEMA;
    await database?.drop();
  });

  it('reports a new subject and registers nothing; --register registers it; then it is unchanged', async () => {
    expect(await cli('schemas', 'check', '--app', app)).toEqual({ code: 0, out: ['new           cli-orders-value (avro, event "cli.order-placed"): no version yet'], err: [] });
    expect(await registry.getAllSubjects()).toEqual([]);
    expect(await cli('schemas', 'check', '--app', app, '--register')).toEqual({ code: 0, out: [expect.stringMatching(/^new/)], err: ['Registered the schemas of 1 subjects.'] });
    expect(await registry.getAllVersions('cli-orders-value')).toEqual([1]);
    expect((await cli('schemas', 'check', '--app', app)).out).toEqual(['unchanged     cli-orders-value (avro, event "cli.order-placed"): version 1']);
  });

  it('exits 1 on an incompatible change, naming the subject and the reason, and registers nothing even with --register', async () => {
    if ((await registry.getAllSubjects()).length === 0) await registry.register('cli-orders-value', { schemaType: 'AVRO', schema: JSON.stringify(ORDER_V1) }, false);
    schemasApp.orderSchema = { ...ORDER_V1, fields: [...ORDER_V1.fields, { name: 'total', type: 'double' }] };
    const { code, out, err } = await cli('schemas', 'check', '--app', app, '--register');
    expect(code).toBe(1);
    expect(out).toEqual([expect.stringMatching(/^INCOMPATIBLE {2}cli-orders-value \(avro, event "cli\.order-placed"\): with version 1 under BACKWARD: the new schema cannot read data written with the registered one/)]);
    expect(err).toEqual(["1 of 1 subjects refuse the app's schemas: nothing was registered."]);
    expect(await registry.getAllVersions('cli-orders-value')).toEqual([1]);
  });

  it('refuses an unknown subcommand and a missing --app, saying what to pass', async () => {
    expect(await cli('schemas', 'list')).toMatchObject({ code: 2, err: [expect.stringContaining('Use "nest-outbox schemas check --app <file> [--register]"')] });
    expect(await cli('schemas', 'check')).toMatchObject({ code: 2, err: [expect.stringContaining('schemas check needs the app')] });
  });
});
