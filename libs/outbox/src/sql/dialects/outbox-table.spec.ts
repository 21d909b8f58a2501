import { OutboxConfigurationError } from '../../core/outbox.errors';
import { createOutboxTableMigration } from '../../typeorm/create-outbox-table.migration';
import { createOutboxPausedTableMigration } from '../../typeorm/console/add-paused-table.migration';
import { outboxMessageEntity } from '../../typeorm/outbox-message.entity';
import { notificationChannel } from '../postgres-notification.listener';
import { PostgresMaintenanceSql } from './outbox-maintenance.sql';
import { statsStatement } from './outbox-stats.sql';
import { PostgresOutboxDialect } from './postgres-outbox.dialect';
import { OutboxTable } from './outbox-table';
import { ConsoleSql } from '../console/console.sql';

describe('OutboxTable', () => {
  it('names the table as before when no schema is given', () => {
    const table = OutboxTable.of('outbox_messages');
    expect(table.quoted()).toBe('"outbox_messages"');
    expect(table.paused.quoted()).toBe('"outbox_messages_paused"');
    expect(table.quoted('mariadb')).toBe('`outbox_messages`');
    expect(String(table)).toBe('outbox_messages');
  });

  it('qualifies the table and its paused-destinations table with the schema', () => {
    const table = OutboxTable.of({ tableName: 'outbox_messages', schema: 'billing' });
    expect(table.quoted()).toBe('"billing"."outbox_messages"');
    expect(table.paused.quoted()).toBe('"billing"."outbox_messages_paused"');
    // Index and constraint names take no schema: PostgreSQL puts them in their table's.
    expect(table.quotedPart('pending_idx')).toBe('"outbox_messages_pending_idx"');
    expect(String(table)).toBe('billing.outbox_messages');
  });

  it.each(['billing; drop table orders', 'public.outbox', '1schema', '', 'x'.repeat(64), 42])('refuses the schema %j, naming the option and the value', (schema) => {
    const attempt = () => OutboxTable.of({ tableName: 'outbox_messages', schema: schema as string });
    expect(attempt).toThrow(OutboxConfigurationError);
    expect(attempt).toThrow(/"schema": expected an identifier \(letters, digits and _, not starting with a digit, at most 63 characters\)/);
    expect(attempt).toThrow(JSON.stringify(schema));
  });

  it.each([
    ['better-sqlite3', /PostgreSQL only, not on the TypeORM driver "better-sqlite3"/],
    ['mariadb', /set "database" in the DataSource options instead/],
    ['mysql', /set "database" in the DataSource options instead/],
  ])('refuses a schema on %s, naming the option', (driver, why) => {
    const attempt = () => OutboxTable.on(driver, { tableName: 'outbox_messages', schema: 'billing' });
    expect(attempt).toThrow(OutboxConfigurationError);
    expect(attempt).toThrow(/option "schema" \("billing"\)/);
    expect(attempt).toThrow(why);
    expect(OutboxTable.on(driver, { tableName: 'outbox_messages' }).quoted()).toBe('"outbox_messages"');
  });
});

describe('the PostgreSQL statements of a table in a schema', () => {
  const table = OutboxTable.of({ tableName: 'outbox_messages', schema: 'billing' });
  // A table name in double quotes that is not the second half of "billing"."…".
  const unqualified = /(?<!"billing"\.)"outbox_messages(_paused)?"/;

  function statementsOf(): string[] {
    const dialect = new PostgresOutboxDialect(table, { notifyChannel: 'c' });
    const maintenance = new PostgresMaintenanceSql(table);
    const console = new ConsoleSql('postgres', table);
    const message = { id: 'x', type: 't', version: 1, aggregateType: 'a', aggregateId: '1', transport: 'default', destination: 'd', occurredAt: new Date(), headers: {}, payloadJson: '{}' };
    return [
      dialect.insert([message]).sql,
      dialect.claim('o', 't', 10, 1000).sql,
      dialect.markPublished('t', ['1']).sql,
      dialect.markFailed('t', [{ position: '1', error: 'e', retryInMs: 1 }]).sql,
      dialect.giveBack('t', ['1']).sql,
      dialect.release('o').sql,
      dialect.probe().sql,
      ...dialect.dropTable(),
      maintenance.listDead('0', 1).sql,
      maintenance.requeue('x').sql,
      maintenance.deletePublished(1, 1).sql,
      statsStatement('postgres', table, null).sql,
      console.list({}, null, 10).sql,
      console.discardBatch({}, '0', 10).sql,
      console.pause('d', null).sql,
      console.pausedList().sql,
      console.retryNowBatch({}, '0', 10).sql,
      console.destinationUsed('d').sql,
    ];
  }

  it('name the table and its paused-destinations table in the schema, every one of them', () => {
    expect(new PostgresOutboxDialect('outbox_messages').probe().sql).toMatch(unqualified);
    for (const sql of statementsOf()) {
      expect(sql).toMatch(/"billing"\."outbox_messages(_paused|_payloads)?"/);
      expect(sql).not.toMatch(unqualified);
    }
  });

  it('create the schema if it is missing, the tables in it, and drop the tables only', () => {
    const dialect = new PostgresOutboxDialect(table);
    const [createSchema, createTable, ...rest] = dialect.createTable();
    expect(createSchema).toBe('CREATE SCHEMA IF NOT EXISTS "billing"');
    expect(createTable).toMatch(/^CREATE TABLE "billing"\."outbox_messages" \(/);
    expect(createTable).toContain('CONSTRAINT "outbox_messages_id_key" UNIQUE (id)');
    expect(rest).toContain(`CREATE INDEX "outbox_messages_pending_idx" ON "billing"."outbox_messages" (position) WHERE status = 'pending'`);
    expect(rest.at(-3)).toMatch(/^CREATE TABLE "billing"\."outbox_messages_paused" /);
    expect(rest.at(-2)).toMatch(/^CREATE TABLE "billing"\."outbox_messages_payloads" /);
    expect(dialect.dropTable()).toEqual([
      'DROP TABLE IF EXISTS "billing"."outbox_messages"',
      'DROP TABLE IF EXISTS "billing"."outbox_messages_paused"',
      'DROP TABLE IF EXISTS "billing"."outbox_messages_payloads"',
    ]);
  });

  it('are the statements of before without a schema', () => {
    const ddl = new PostgresOutboxDialect('outbox_messages').createTable();
    expect(ddl[0]).toMatch(/^CREATE TABLE "outbox_messages" \(/);
    expect(ddl).toContain(`CREATE INDEX "outbox_messages_pending_idx" ON "outbox_messages" (position) WHERE status = 'pending'`);
    expect(ddl.some((sql) => sql.includes('SCHEMA'))).toBe(false);
  });
});

describe('notificationChannel', () => {
  it('keeps the channel of before without a schema', () => {
    expect(notificationChannel('outbox_messages')).toBe('outbox_outbox_messages');
  });

  it('gives the same table name in two schemas two channels', () => {
    expect(notificationChannel({ tableName: 'outbox_messages', schema: 'a' })).toBe('outbox_a.outbox_messages');
    expect(notificationChannel({ tableName: 'outbox_messages', schema: 'b' })).toBe('outbox_b.outbox_messages');
    // Underscores cannot make two locations meet: the dot is in neither name.
    expect(notificationChannel({ tableName: 'b_c', schema: 'a' })).not.toBe(notificationChannel({ tableName: 'c', schema: 'a_b' }));
  });

  it('stays within 63 characters for long names, and apart for names that differ only at the end', () => {
    const long = 's'.repeat(60);
    const first = notificationChannel({ tableName: `${'t'.repeat(60)}_1`, schema: long });
    const second = notificationChannel({ tableName: `${'t'.repeat(60)}_2`, schema: long });
    expect(first).toHaveLength(63);
    expect(second).toHaveLength(63);
    expect(first).not.toBe(second);
  });
});

describe('entity and migrations of a table in a schema', () => {
  it('has an entity of its own, the same one on every call', () => {
    const inSchema = outboxMessageEntity({ tableName: 'outbox_messages', schema: 'billing' });
    expect(inSchema).toBe(outboxMessageEntity({ tableName: 'outbox_messages', schema: 'billing' }));
    expect(inSchema).not.toBe(outboxMessageEntity());
    expect(inSchema).not.toBe(outboxMessageEntity({ tableName: 'outbox_messages', schema: 'sales' }));
    expect(inSchema.options).toMatchObject({ tableName: 'outbox_messages', schema: 'billing' });
    expect(inSchema.options.name).not.toBe(outboxMessageEntity({ tableName: 'outbox_messages', schema: 'sales' }).options.name);
    expect(outboxMessageEntity().options.name).toBe('OutboxMessage');
  });

  it('has migrations of their own names, which TypeORM records; without a schema the names of before', () => {
    const name = (migration: new () => { name?: string }) => new migration().name;
    expect(name(createOutboxTableMigration())).toBe('CreateOutboxTableoutboxmessages1767225600000');
    expect(name(createOutboxPausedTableMigration())).toBe('AddOutboxPausedTableoutboxmessages1767312000000');
    expect(name(createOutboxTableMigration({ tableName: 'outbox_messages', schema: 'billing' }))).toBe('CreateOutboxTableoutboxmessagesInbilling1767225600000');
    expect(name(createOutboxPausedTableMigration({ tableName: 'outbox_messages', schema: 'billing' }))).toBe('AddOutboxPausedTableoutboxmessagesInbilling1767312000000');
  });
});
