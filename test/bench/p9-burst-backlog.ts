import { Client } from 'pg';
import { privateSchema, suffix } from './support/env';
import { type CappedDrain, ourDrain } from './support/capped-drains';
import { explainClaim } from './support/explain';
import { PostgresOutboxDialect } from './support/outbox';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { seedKeyedRows } from './support/seed';
import { fmt, fmtRatio, ratio } from './support/stats';

const AGGREGATES = 50;

/** The table's statistics when the burst arrives: none, those of the empty table, or the burst's own. */
const STATISTICS = [
  { key: 'never', label: 'before any `ANALYZE` (autovacuum off for the table)' },
  { key: 'empty', label: 'analyzed while empty, before the burst (autovacuum off)' },
  { key: 'analyzed', label: 'after `ANALYZE`' },
] as const;

/**
 * P9: a backlog inserted in one burst (as after an outage) drained before any ANALYZE has seen
 * it — autovacuum off for the table, so autoanalyze cannot run mid-drain — side by side with the
 * same backlog after `ANALYZE`, and with statistics taken while the table was empty (what
 * autovacuum leaves a quiet table with).
 */
export async function p9BurstBacklog(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const count = sizes.burstRows;
  const keys = Array.from({ length: count }, (_, i) => `device-${String(i % AGGREGATES).padStart(3, '0')}`);
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p9');
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  await admin.query(`SET search_path TO ${schema}`);
  const run = suffix();
  const results: Array<{ label: string; drain: CappedDrain; estimate: string }> = [];
  const explains: string[] = [];
  try {
    for (const { key, label } of STATISTICS) {
      const name = `outbox_${key}`;
      for (const sql of new PostgresOutboxDialect(name).createTable()) await admin.query(sql);
      await admin.query(`ALTER TABLE "${name}" SET (autovacuum_enabled = false)`);
      if (key === 'empty') await admin.query(`ANALYZE "${name}"`);
      const topic = `bench-p9-${name}-${run}`;
      await seedKeyedRows(admin, schema, name, topic, keys);
      if (key === 'analyzed') await admin.query(`ANALYZE "${name}"`);
      const { reltuples, relpages } = (await admin.query(`SELECT reltuples, relpages FROM pg_class WHERE oid = $1::regclass`, [`${schema}."${name}"`])).rows[0];
      const estimate = `pg_class: reltuples ${reltuples}, relpages ${relpages}`;
      explains.push(...(await explainClaim(admin, name, `${label}: first claim, ${fmt(count, 0)} pending over ${AGGREGATES} aggregates; ${estimate}`)));
      const drain = await ourDrain(admin, { postgresUrl: services.postgresUrl, brokers: services.kafkaBrokers, schema, table: name, topic, total: count, capMs: sizes.slowContenderCapMs }, `p9-${run}-${name}`);
      context.log(`P9 ${label}: ${fmt(drain.perSecond)} msg/s (${drain.drained} in ${fmt(drain.seconds)} s)`);
      results.push({ label, drain, estimate });
    }
  } finally {
    await admin.end();
    await drop();
  }

  const [before, empty, after] = results;
  const claimMs = (drain: CappedDrain) => (drain.claims && drain.claims.length > 0 ? `${fmt(drain.claims.reduce((a, b) => a + b, 0) / drain.claims.length, 2)} (${drain.claims.length} claims)` : 'n/a');
  const summary: SummaryRow[] = [
    { bench: 'P9', figure: 'burst backlog drain, before ANALYZE / after', value: fmtRatio(ratio(before.drain.perSecond, after.drain.perSecond)), aim: '≥ 0.5×', met: before.drain.perSecond >= after.drain.perSecond / 2 },
    { bench: 'P9', figure: 'burst backlog drain, analyzed while empty / after', value: fmtRatio(ratio(empty.drain.perSecond, after.drain.perSecond)), aim: '≥ 0.5×', met: empty.drain.perSecond >= after.drain.perSecond / 2 },
  ];
  return {
    id: 'P9',
    title: `P9 — a burst of ${fmt(count, 0)} rows over ${AGGREGATES} aggregates, drained before, without and after ANALYZE`,
    body: [
      ...table(
        ['table statistics', 'ours msg/s', 'drained', 'mean claim ms', 'ratio to after'],
        results.map((r) => [r.label, fmt(r.drain.perSecond), `${fmt(r.drain.drained, 0)} in ${fmt(r.drain.seconds)} s${r.drain.capped ? ' (capped)' : ''}`, claimMs(r.drain), fmtRatio(ratio(r.drain.perSecond, after.drain.perSecond))]),
      ),
      '',
      `Ours with defaults (batchSize 100), \`relay.trigger()\` for at most ${fmt(sizes.slowContenderCapMs / 1000)} s on a fresh table with \`autovacuum_enabled = false\`. ` +
        'EXPLAIN (ANALYZE, BUFFERS) of the first claim as the library’s store issues it (rolled back):',
      '',
      ...explains,
    ],
    summary,
  };
}
