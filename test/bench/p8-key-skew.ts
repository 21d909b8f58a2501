import { Client } from 'pg';
import { privateSchema, suffix } from './support/env';
import { type CappedDrain, type DrainTarget, naiveDrain, ourDrain, rawKafkajsDrain } from './support/capped-drains';
import { explainClaim } from './support/explain';
import { PostgresOutboxDialect } from './support/outbox';
import { type BenchContext, type Section, type SummaryRow, table } from './support/report';
import { seedKeyedRows } from './support/seed';
import { fmt, fmtRatio, ratio } from './support/stats';

interface Distribution {
  name: string;
  /** The aggregate id of each row, in insertion order. */
  keys(count: number): string[];
}

/** Time spent in claims, publishes and settles, summed over batches, as shares of the drain's wall time (above 100 % when they overlap). */
function phaseShares({ phases, seconds }: CappedDrain): string {
  if (!phases || seconds <= 0) return 'no phases';
  const share = (times: number[]) => `${fmt(times.reduce((a, b) => a + b, 0) / 10 / seconds, 0)} %`;
  return `claims ${phases.claim.length}: ${share(phases.claim)}, publish ${share(phases.publish)}, settle ${share(phases.settle)} of the drain`;
}

const account = (k: number) => `account-${String(k).padStart(6, '0')}`;

/** Zipf (s = 1) over `count / 4` keys, drawn with a fixed-seed generator so every run seeds the same rows. */
function zipfKeys(count: number): string[] {
  const keys = Math.max(1, Math.floor(count / 4));
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= keys; rank++) cumulative.push((total += 1 / rank));
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return Array.from({ length: count }, () => {
    const target = random() * total;
    let low = 0;
    let high = keys - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (cumulative[mid] < target) low = mid + 1;
      else high = mid;
    }
    return account(low);
  });
}

const DISTRIBUTIONS: Distribution[] = [
  { name: 'uniform (N/4 keys, 4 rows each, interleaved)', keys: (count) => Array.from({ length: count }, (_, i) => account(i % Math.max(1, Math.floor(count / 4)))) },
  { name: 'Zipf-like (s = 1 over N/4 keys)', keys: zipfKeys },
  { name: '10 keys', keys: (count) => Array.from({ length: count }, (_, i) => account(i % 10)) },
  { name: '1 key', keys: (count) => Array.from({ length: count }, () => account(0)) },
];

/**
 * P8: key skew. The same N rows spread uniformly, Zipf-like, over 10 keys and over 1 key, each
 * drained by ours, by raw kafkajs (the ceiling) and by the naive one-row-per-transaction relay.
 */
export async function p8KeySkew(context: BenchContext): Promise<Section> {
  const { services, sizes } = context;
  const count = sizes.skewRows;
  const { schema, drop } = await privateSchema(services.postgresUrl, 'bench_p8');
  const admin = new Client({ connectionString: services.postgresUrl });
  await admin.connect();
  await admin.query(`SET search_path TO ${schema}`);
  const run = suffix();
  const results: Array<{ distribution: Distribution; topKeyShare: number; ours: CappedDrain; raw: CappedDrain; naive: CappedDrain }> = [];
  const explains: string[] = [];
  let tableNo = 0;
  try {
    for (const distribution of DISTRIBUTIONS) {
      const keys = distribution.keys(count);
      const topKeyShare = Math.max(...countBy(keys).values()) / count;
      const target = async (who: string): Promise<DrainTarget> => {
        const name = `outbox_${++tableNo}`;
        for (const sql of new PostgresOutboxDialect(name).createTable()) await admin.query(sql);
        const topic = `bench-p8-${who}-${run}-${tableNo}`;
        await seedKeyedRows(admin, schema, name, topic, keys);
        await admin.query(`ANALYZE "${name}"`);
        return { postgresUrl: services.postgresUrl, brokers: services.kafkaBrokers, schema, table: name, topic, total: count, capMs: sizes.slowContenderCapMs };
      };
      const ourTarget = await target('ours');
      explains.push(...(await explainClaim(admin, ourTarget.table, `${distribution.name}: first claim, ${fmt(count, 0)} pending`)));
      const ours = await ourDrain(admin, ourTarget, `p8-${run}-${tableNo}`);
      const raw = await rawKafkajsDrain(admin, await target('raw'), `bench-p8-raw-${run}`);
      const naive = await naiveDrain({ ...(await target('naive')), capMs: sizes.slowContenderCapMs / 2 }, `bench-p8-naive-${run}`);
      context.log(`P8 ${distribution.name}: ours ${fmt(ours.perSecond)} msg/s (${ours.drained}; ${phaseShares(ours)}), raw ${fmt(raw.perSecond)}, naive ${fmt(naive.perSecond)}`);
      results.push({ distribution, topKeyShare, ours, raw, naive });
    }
  } finally {
    await admin.end();
    await drop();
  }

  const uniform = results[0].ours.perSecond;
  const oneKey = results[results.length - 1];
  const cell = (drain: CappedDrain) => `${fmt(drain.perSecond)}${drain.capped ? ` (${fmt(drain.drained, 0)} in the ${fmt(drain.seconds)} s cap)` : ''}`;
  const claimMs = (drain: CappedDrain) => (drain.claims && drain.claims.length > 0 ? fmt(drain.claims.reduce((a, b) => a + b, 0) / drain.claims.length, 2) : 'n/a');
  const rows = results.map((r) => [
    r.distribution.name,
    `${(100 * r.topKeyShare).toFixed(1)} %`,
    cell(r.ours),
    claimMs(r.ours),
    cell(r.raw),
    cell(r.naive),
    fmtRatio(ratio(r.ours.perSecond, uniform)),
    fmtRatio(ratio(r.ours.perSecond, r.raw.perSecond)),
    fmtRatio(ratio(r.ours.perSecond, r.naive.perSecond)),
  ]);
  const summary: SummaryRow[] = [
    ...results.slice(1).map((r) => ({
      bench: 'P8',
      figure: `ours, ${r.distribution.name} / uniform`,
      value: fmtRatio(ratio(r.ours.perSecond, uniform)),
      aim: '≥ 0.5×',
      met: r.ours.perSecond >= uniform / 2,
    })),
    { bench: 'P8', figure: 'ours / naive relay, 1 key', value: fmtRatio(ratio(oneKey.ours.perSecond, oneKey.naive.perSecond)), aim: '≥ 10×', met: oneKey.ours.perSecond >= oneKey.naive.perSecond * 10 },
  ];
  return {
    id: 'P8',
    title: `P8 — key skew: ${fmt(count, 0)} pending rows spread over different numbers of aggregates`,
    body: [
      ...table(['distribution', 'busiest key', 'ours msg/s', 'ours mean claim ms', 'raw kafkajs msg/s (2 batches in flight)', 'naive msg/s', 'ours / uniform', 'ours / raw', 'ours / naive'], rows),
      '',
      `Each contender drains its own copy of the same rows (seeded in the same order, ANALYZEd) into its own topic with \`acks: -1\`. ` +
        `Ours runs \`relay.trigger()\` with defaults (batchSize 100) for at most ${fmt(sizes.slowContenderCapMs / 1000)} s, the naive relay for at most ${fmt(sizes.slowContenderCapMs / 2000)} s; ` +
        'a capped rate is what it recorded as published within its cap.',
      '',
      'EXPLAIN (ANALYZE, BUFFERS) of the first claim as the library’s store issues it (rolled back):',
      '',
      ...explains,
    ],
    summary,
  };
}

function countBy(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
