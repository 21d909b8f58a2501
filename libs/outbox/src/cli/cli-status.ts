import type { SqlConnection } from '../core/sql-connection.port';
import { summarize } from '../core/stats/outbox-stats.reader';
import { createSqlOutboxStatsSource } from '../sql/outbox-sql.factory';
import type { CliIo } from './cli-io';
import type { OutboxTable } from '../sql/dialects/outbox-table';
import { poisonStatusLines, readPoisonSummary, type PoisonTables } from './cli-status-poison';
import { readWalSlotsOfTable, type WalSlotReading } from '../delivery/delivery-modes';

const seconds = (ms: number | null) => (ms === null ? '-' : `${(ms / 1000).toFixed(1)} s`);

/**
 * `status`: the same figures as `OutboxStats`, and the inbox's poison records when the database has
 * their table; exit 1 when lag or dead rows pass the thresholds (for cron and probes).
 */
export async function printStatus(
  connection: SqlConnection,
  table: OutboxTable,
  thresholds: { maxLagMs?: number; maxDead?: number },
  json: boolean,
  io: CliIo,
  poisonTables: PoisonTables = {},
): Promise<number> {
  const source = createSqlOutboxStatsSource(connection, table);
  const now = Date.now();
  const [counts, paused, poison, wal] = await Promise.all([source.readCounts(), source.readPaused?.() ?? [], readPoisonSummary(connection, poisonTables, now), readWalSlots(connection, table)]);
  const stats = summarize(counts, now, { running: false, lastRoundAt: null, lastSuccessfulRoundAt: null }, paused);
  const failures: string[] = [];
  if (thresholds.maxLagMs !== undefined && (stats.oldestPendingAgeMs ?? 0) > thresholds.maxLagMs) {
    failures.push(`lag ${seconds(stats.oldestPendingAgeMs)} is over --max-lag ${seconds(thresholds.maxLagMs)}`);
  }
  if (thresholds.maxDead !== undefined && stats.dead > thresholds.maxDead) failures.push(`${stats.dead} dead message(s), over --max-dead ${thresholds.maxDead}`);
  for (const slot of wal) {
    const problem = slotProblem(slot);
    if (problem) failures.push(`WAL slot "${slot.slotName}" ${problem}`);
  }
  if (json) {
    const { relay: _relay, ...rest } = stats;
    io.out(JSON.stringify({ ...rest, ...(poison && { poison }), ...(wal.length > 0 && { wal }), ok: failures.length === 0, failures }, null, 2));
  } else {
    io.out(`pending ${stats.pending}  in flight ${stats.inFlight}  retrying ${stats.retrying}  dead ${stats.dead}  published (last hour) ${stats.publishedLastHour}`);
    io.out(`lag (oldest pending) ${seconds(stats.oldestPendingAgeMs)}`);
    for (const d of stats.destinations) {
      io.out(`  ${d.transport}/${d.destination}: pending ${d.pending}, dead ${d.dead}, published (last hour) ${d.publishedLastHour}, lag ${seconds(d.oldestPendingAgeMs)}`);
    }
    for (const p of stats.paused) io.out(`PAUSED ${p.destination} since ${p.pausedAt}${p.reason ? `: ${p.reason}` : ''}`);
    for (const slot of wal.filter((slot) => !slotProblem(slot))) {
      const lag = slot.lagSeconds === null ? '' : `, confirmation lag ${slot.lagSeconds.toFixed(1)} s`;
      io.out(`WAL slot "${slot.slotName}": ${slot.active ? 'streamed by an instance' : 'NOT streamed now'}, ${slot.retainedBytes} bytes of WAL retained${lag} (published counts above include what it streamed)`);
    }
    if (poison) for (const line of poisonStatusLines(poison, seconds)) io.out(line);
    for (const failure of failures) io.out(`FAIL ${failure}`);
    if (failures.length === 0) io.out('OK');
  }
  return failures.length === 0 ? 0 : 1;
}

/** What is wrong with a slot this database streamed, said after its name; undefined when nothing is. */
function slotProblem(slot: WalSlotReading): string | undefined {
  if (slot.missing) return 'does not exist in this database, though its stream saved a position here: an instance that relays makes it anew (see docs/wal-mode.md, "What survives what")';
  if (slot.foreignDatabase !== undefined) return `belongs to the database "${slot.foreignDatabase}", not this one: give this outbox its own wal.slotName`;
  if (slot.invalidated) return 'was invalidated by the server (past max_slot_wal_keep_size): an instance that relays makes it anew';
  return undefined;
}

/** PostgreSQL: the WAL mode's slots of this table (none elsewhere). */
async function readWalSlots(connection: SqlConnection, table: OutboxTable): Promise<WalSlotReading[]> {
  if (connection.dialect !== 'postgres') return [];
  return readWalSlotsOfTable(async (sql, params) => (await connection.run({ sql, params: params ?? [] })).records, table);
}
