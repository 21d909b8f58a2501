import { postgresRows } from './databases';
import { PostgresStandby } from './postgres-standby';
import { PrivatePostgres } from './private-postgres';

/**
 * The failover tests' support: a standby made of a primary with a logical slot, promoted once the
 * primary is down, has the primary's rows, takes writes, and has lost the slot.
 */
describe('PostgresStandby: a promoted standby takes over from a stopped primary', () => {
  let primary: PrivatePostgres | undefined;
  let standby: PostgresStandby | undefined;

  afterAll(async () => {
    await standby?.cleanup();
    await primary?.cleanup();
  }, 60_000);

  it('has every row committed on the primary, accepts writes, and has no logical slot of the primary', async () => {
    primary = await PrivatePostgres.start('failover-primary');
    await postgresRows(primary.url(), `CREATE TABLE parcels (id int PRIMARY KEY, note text); INSERT INTO parcels SELECT n, 'in the base backup' FROM generate_series(1, 100) n`);
    await postgresRows(primary.url(), `SELECT pg_create_logical_replication_slot('s', 'pgoutput')`);
    expect(await postgresRows(primary.url(), 'SELECT slot_name FROM pg_replication_slots')).toEqual([{ slot_name: 's' }]);

    standby = await PostgresStandby.of(primary, 'failover-standby');
    // Rows the standby can only have by streaming, not from the copy.
    await postgresRows(primary.url(), `INSERT INTO parcels SELECT n, 'streamed' FROM generate_series(101, 150) n`);
    await standby.caughtUp();
    await primary.end('fast');
    await standby.promote();

    expect(await postgresRows(standby.url(), 'SELECT count(*)::int AS rows, max(id) AS last FROM parcels')).toEqual([{ rows: 150, last: 150 }]);
    await postgresRows(standby.url(), `INSERT INTO parcels VALUES (151, 'after the failover')`);
    expect(await postgresRows(standby.url(), 'SELECT count(*)::int AS rows FROM parcels')).toEqual([{ rows: 151 }]);
    // A stream reading the old primary's slot has to make it anew after a failover.
    expect(await postgresRows(standby.url(), `SELECT slot_name FROM pg_replication_slots WHERE slot_name = 's'`)).toEqual([]);
  }, 60_000);
});
