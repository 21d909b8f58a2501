import type { SqlStatement } from '../core/sql-connection.port';
import { OutboxTable } from './dialects/outbox-table';
import { PlannerStatistics } from './planner-statistics';

/** A runner that answers the staleness query with `state` and records every statement. */
function runnerAnswering(state: { stale: boolean; mayAnalyze: boolean }) {
  const statements: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  return {
    statements,
    release,
    runner: {
      rows: async (statement: SqlStatement) => {
        statements.push(statement.sql.trim().split(/\s+/)[0]);
        await held;
        return statement.sql.startsWith('ANALYZE') ? [] : [state];
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
    expect(statements).toEqual(['SELECT', 'ANALYZE']);
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
