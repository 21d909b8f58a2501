import type { SqlStatement } from '../core/sql-connection.port';
import { OutboxTable } from './dialects/outbox-table';
import { PlannerStatistics } from './planner-statistics';

/**
 * A runner that answers the staleness query with `state` and records every statement; statements
 * wait for `release()`, and ANALYZE (when `holdAnalyze`) for `finishAnalyze()` as well.
 */
function runnerAnswering(state: { stale: boolean; mayAnalyze: boolean; partitioned?: boolean }, { holdAnalyze = false } = {}) {
  const statements: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let finishAnalyze!: () => void;
  const analyzing = holdAnalyze ? new Promise<void>((resolve) => (finishAnalyze = resolve)) : Promise.resolve();
  return {
    statements,
    release,
    finishAnalyze: () => finishAnalyze(),
    runner: {
      rows: async (statement: SqlStatement) => {
        statements.push(statement.sql.trim().split(/\s+/)[0]);
        await held;
        if (!statement.sql.startsWith('ANALYZE')) return [{ partitioned: false, ...state }];
        await analyzing;
        statements.push('ANALYZE done');
        return [];
      },
    },
  };
}

const settle = async () => new Promise((resolve) => setImmediate(resolve));

describe('PlannerStatistics', () => {
  const table = OutboxTable.of({ tableName: 'outbox_messages', schema: 'app' });

  it('looks at the statistics once per 1,000 settled rows, one look at a time, and analyzes the table when they are stale', async () => {
    const { runner, statements, release } = runnerAnswering({ stale: true, mayAnalyze: true });
    const statistics = new PlannerStatistics(runner, table);
    statistics.noteSettled(999);
    expect(statements).toEqual([]);
    statistics.noteSettled(1);
    statistics.noteSettled(5_000); // while the first look runs: no second one
    expect(statements).toEqual(['SELECT']);
    release();
    await settle();
    await settle();
    expect(statements).toEqual(['SELECT', 'ANALYZE', 'ANALYZE done', 'SELECT']);
  });

  it('before the first claim, waits for the ANALYZE of a plain table whose statistics are missing or stale, once for every claim', async () => {
    const { runner, statements, release, finishAnalyze } = runnerAnswering({ stale: true, mayAnalyze: true }, { holdAnalyze: true });
    release();
    const statistics = new PlannerStatistics(runner, table);
    let ready = false;
    const first = statistics.beforeClaim().then(() => (ready = true));
    const second = statistics.beforeClaim();
    await settle();
    expect(statements).toEqual(['SELECT', 'ANALYZE']);
    expect(ready).toBe(false);
    finishAnalyze();
    await Promise.all([first, second]);
    await statistics.beforeClaim();
    expect(statements).toEqual(['SELECT', 'ANALYZE', 'ANALYZE done', 'SELECT']);
  });

  it('lets the first claim go after 2 s when its ANALYZE waits (behind a VACUUM of the table), the ANALYZE going on beside it', async () => {
    jest.useFakeTimers();
    try {
      const { runner, statements, release, finishAnalyze } = runnerAnswering({ stale: true, mayAnalyze: true }, { holdAnalyze: true });
      release();
      const statistics = new PlannerStatistics(runner, table);
      let ready = false;
      const first = statistics.beforeClaim().then(() => (ready = true));
      await jest.advanceTimersByTimeAsync(1_999);
      expect(ready).toBe(false);
      await jest.advanceTimersByTimeAsync(1);
      await first;
      expect(statements).toEqual(['SELECT', 'ANALYZE']);
      // A look while the first one runs would be a second ANALYZE queued behind the same lock.
      statistics.noteSettled(1_000);
      expect(statements).toEqual(['SELECT', 'ANALYZE']);
      finishAnalyze();
      await jest.advanceTimersByTimeAsync(0);
      expect(statements).toEqual(['SELECT', 'ANALYZE', 'ANALYZE done', 'SELECT']);
    } finally {
      jest.useRealTimers();
    }
  });

  it('before the first claim, starts the ANALYZE of a partitioned table (it reads every partition) without waiting for it', async () => {
    const { runner, statements, release, finishAnalyze } = runnerAnswering({ stale: true, mayAnalyze: true, partitioned: true }, { holdAnalyze: true });
    release();
    await new PlannerStatistics(runner, table).beforeClaim();
    expect(statements).toEqual(['SELECT', 'ANALYZE']);
    finishAnalyze();
  });

  it('lets the first claim go, saying why, when the statistics cannot be looked at', async () => {
    const said: string[] = [];
    const failing = { rows: async () => Promise.reject(new Error('connection refused')) };
    await expect(new PlannerStatistics(failing, table, (message) => said.push(message)).beforeClaim()).resolves.toBeUndefined();
    expect(said).toEqual([expect.stringMatching(/could not refresh its planner statistics \(connection refused\); autovacuum still does/)]);
  });

  it('looks at once after a slow claim, and after slow claims on fresh statistics no more than every 5 s', async () => {
    const { runner, statements, release } = runnerAnswering({ stale: false, mayAnalyze: true });
    release();
    let now = 0;
    const statistics = new PlannerStatistics(runner, table, undefined, () => now);
    statistics.noteClaim(49);
    expect(statements).toEqual([]);
    statistics.noteClaim(300);
    await settle();
    expect(statements).toEqual(['SELECT']);
    now = 4_999;
    statistics.noteClaim(300);
    await settle();
    expect(statements).toEqual(['SELECT']);
    now = 5_000;
    statistics.noteClaim(300);
    await settle();
    expect(statements).toEqual(['SELECT', 'SELECT']);
  });

  it('asks whether the statistics know the backlog after a slow claim only, not on its looks every 1,000 settled rows', async () => {
    const asked: unknown[] = [];
    const statistics = new PlannerStatistics(
      { rows: async (statement: SqlStatement) => (asked.push(statement.params[2]), [{ stale: false, mayAnalyze: true, partitioned: false, changed: '0' }]) },
      table,
    );
    statistics.noteSettled(1_000);
    await settle();
    statistics.noteClaim(300);
    await settle();
    expect(asked).toEqual([false, true]);
  });

  it('analyzes the columns the claim plans on, and counts changes from where the count stood after its own ANALYZE', async () => {
    const ran: SqlStatement[] = [];
    let changed = 5_000;
    const runner = {
      rows: async (statement: SqlStatement) => {
        ran.push(statement);
        return statement.sql.startsWith('ANALYZE') ? ((changed = 1_200), []) : [{ stale: true, mayAnalyze: true, partitioned: false, changed: String(changed) }];
      },
    };
    const statistics = new PlannerStatistics(runner, table);
    await statistics.refreshIfStale();
    await statistics.refreshIfStale();
    expect(ran.map((statement) => statement.sql.trim().split(/\s+/)[0])).toEqual(['SELECT', 'ANALYZE', 'SELECT', 'SELECT', 'ANALYZE', 'SELECT']);
    expect(ran[1].sql).toBe('ANALYZE "app"."outbox_messages" (position, status, aggregate_type, aggregate_id, transport, destination, next_attempt_at, lease_expires_at, published_at, dead_at)');
    // The look after the first ANALYZE counts from the 1,200 changes the count kept.
    expect(ran.map((statement) => statement.params[1])).toEqual([0, undefined, 0, 1_200, undefined, 0]);
  });

  it('leaves fresh statistics alone', async () => {
    const { runner, statements, release } = runnerAnswering({ stale: false, mayAnalyze: true });
    release();
    await expect(new PlannerStatistics(runner, table).refreshIfStale()).resolves.toBe(false);
    expect(statements).toEqual(['SELECT']);
  });

  it('turns itself off, saying why once, for a role that does not own the table', async () => {
    const { runner, statements, release } = runnerAnswering({ stale: true, mayAnalyze: false });
    release();
    const said: string[] = [];
    const statistics = new PlannerStatistics(runner, table, (message) => said.push(message));
    statistics.noteSettled(1_000);
    await settle();
    statistics.noteSettled(10_000);
    await settle();
    expect(statements).toEqual(['SELECT']);
    expect(said).toEqual([expect.stringMatching(/^Outbox table "app\.outbox_messages" is not owned by this role.*autovacuum/)]);
  });
});
