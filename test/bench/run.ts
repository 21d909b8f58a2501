import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchServices, REPO_ROOT, withClient } from './support/env';
import { type BenchContext, FULL, QUICK, type Section, type SummaryRow, table, verdict } from './support/report';
import { p1Drain } from './p1-drain';
import { p2WritePath } from './p2-write-path';
import { p3Latency } from './p3-latency';
import { p4ScaleOut } from './p4-scale-out';
import { p5Memory } from './p5-memory';
import { p6Idle } from './p6-idle';
import { p7Inbox } from './p7-inbox';
import { p8KeySkew } from './p8-key-skew';
import { p9BurstBacklog } from './p9-burst-backlog';
import { p10PartitionedTable } from './p10-partitioned-table';
import { p11SeveralOutboxes } from './p11-several-outboxes';
import { p12ClaimCheck } from './p12-claim-check';

const USAGE = `npm run bench [-- --full] [-- --only P1,P3] [-- --update-doc]
  --full        the larger size (P1/P4 100k rows, P5 1M rows, longer P2/P3/P6 windows)
  --only LIST   run only these benchmarks (P1..P12); P5's 1M-row memory drain runs only with --full or when
                P5 is named here (its WAL retention row runs in every run that includes P5)
  --update-doc  also replace the figures section of BENCHMARKS.md with this run's`;

interface Args {
  full: boolean;
  only?: Set<string>;
  updateDoc: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { full: false, updateDoc: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--full') args.full = true;
    else if (arg === '--quick') args.full = false;
    else if (arg === '--update-doc') args.updateDoc = true;
    else if (arg === '--only' || arg.startsWith('--only=')) {
      const list = arg.includes('=') ? arg.slice('--only='.length) : argv[++i];
      args.only = new Set((list ?? '').split(',').map((item) => item.trim().toUpperCase()).filter(Boolean));
    } else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      console.error(`unknown argument ${arg}\n${USAGE}`);
      process.exit(2);
    }
  }
  return args;
}

const BENCHMARKS: Array<{ id: string; fullOnly?: boolean; run: (context: BenchContext) => Promise<Section> }> = [
  { id: 'P1', run: p1Drain },
  { id: 'P2', run: p2WritePath },
  { id: 'P3', run: p3Latency },
  { id: 'P4', run: p4ScaleOut },
  { id: 'P5', run: p5Memory },
  { id: 'P6', run: p6Idle },
  { id: 'P7', run: p7Inbox },
  { id: 'P8', run: p8KeySkew },
  { id: 'P9', run: p9BurstBacklog },
  { id: 'P10', run: p10PartitionedTable },
  { id: 'P11', run: p11SeveralOutboxes },
  { id: 'P12', run: p12ClaimCheck },
];

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const sizes = args.full ? FULL : QUICK;
  const services = benchServices();
  const started = new Date();
  const log = (message: string) => console.error(`[bench ${((Date.now() - started.getTime()) / 1000).toFixed(0).padStart(4)} s] ${message}`);
  const context: BenchContext = { services, sizes, log };
  const machine = await machineContext(services.postgresUrl);
  const loadBefore = loadavg();
  log(`size ${sizes.name}; ${machine.find(([key]) => key === 'CPU')?.[1]}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);

  const sections: Section[] = [];
  let failed = 0;
  for (const bench of BENCHMARKS) {
    const selected = args.only ? args.only.has(bench.id) : !bench.fullOnly || args.full;
    if (!selected) continue;
    // Named with --only, P5 also runs its 1M-row memory drain in the quick size; a quick run without --only has its WAL row alone.
    if (bench.id === 'P5' && args.only && sizes.memoryRows === 0) sizes.memoryRows = FULL.memoryRows;
    log(`${bench.id} starting`);
    const benchStarted = Date.now();
    try {
      sections.push(await bench.run(context));
    } catch (error) {
      failed++;
      const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`${bench.id} FAILED: ${text}`);
      sections.push({ id: bench.id, title: `${bench.id} — failed`, body: ['```', text, '```'], summary: [{ bench: bench.id, figure: 'run', value: `failed: ${firstLine(text)}` }] });
    }
    log(`${bench.id} done in ${((Date.now() - benchStarted) / 1000).toFixed(0)} s`);
  }
  const loadAfter = loadavg();
  machine.push(['load average (1/5/15 min) at start → end', `${loadBefore.map((l) => l.toFixed(2)).join(' ')} → ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`]);
  machine.push(['run', `${sizes.name} size, ${started.toISOString()}, ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s`]);

  const markdown = render(sizes.name, started, machine, sections);
  console.log(markdown);
  const outDir = join(REPO_ROOT, '.bench');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, `latest-${sizes.name}.md`), markdown);
  writeFileSync(join(outDir, `latest-${sizes.name}.json`), JSON.stringify({ machine, sections }, null, 2));
  log(`written to .bench/latest-${sizes.name}.md and .json`);
  if (args.updateDoc && args.only) log('BENCHMARKS.md not updated: --update-doc takes a whole run, not --only');
  else if (args.updateDoc) updateBenchmarksDoc(markdown, sizes.name, log);
  process.exit(failed > 0 ? 1 : 0);
}

function render(size: string, started: Date, machine: Array<[string, string]>, sections: Section[]): string {
  const summary: SummaryRow[] = sections.flatMap((section) => section.summary);
  return [
    `### Run: ${size} size, ${started.toISOString()}`,
    '',
    ...table(['machine', ''], machine),
    '',
    '#### Summary (each ratio names what it is taken against; a raw producer is the one at the relays\' concurrency, two batches in flight, unless named; aims from the issues)',
    '',
    ...table(
      ['bench', 'figure', 'value', 'aim', 'met'],
      summary.map((row) => [row.bench, row.figure, row.value, row.aim ?? '', verdict(row.met)]),
    ),
    '',
    ...sections.flatMap((section) => [`#### ${section.title}`, '', ...section.body, '']),
  ].join('\n');
}

/** BENCHMARKS.md keeps the latest figures of each size between these markers. */
const marker = (size: string, end: 'start' | 'end') => `<!-- bench:${size}:${end} -->`;

function updateBenchmarksDoc(markdown: string, size: string, log: (message: string) => void): void {
  const file = join(REPO_ROOT, 'BENCHMARKS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const [startMarker, endMarker] = [marker(size, 'start'), marker(size, 'end')];
  const start = text.indexOf(startMarker);
  const end = text.indexOf(endMarker);
  if (start < 0 || end < start) {
    log(`BENCHMARKS.md has no ${startMarker} … ${endMarker} section; not updated`);
    return;
  }
  const note = `<!-- written by \`npm run bench -- ${size === 'full' ? '--full ' : ''}--update-doc\`; edit outside the markers -->`;
  writeFileSync(file, `${text.slice(0, start + startMarker.length)}\n${note}\n\n${markdown}\n${text.slice(end)}`);
  log(`BENCHMARKS.md: ${size} figures updated`);
}

async function machineContext(postgresUrl: string): Promise<Array<[string, string]>> {
  const cpuinfo = safeRead('/proc/cpuinfo');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const osName = /^PRETTY_NAME="?([^"\n]+)"?/m.exec(safeRead('/etc/os-release'))?.[1] ?? process.platform;
  const pg = await withClient(postgresUrl, async (client) => {
    const show = async (name: string) => String((await client.query(`SHOW ${name}`)).rows[0][name]);
    return {
      version: String((await client.query('SHOW server_version')).rows[0].server_version),
      fsync: await show('fsync'),
      synchronousCommit: await show('synchronous_commit'),
      walLevel: await show('wal_level'),
      sharedBuffers: await show('shared_buffers'),
      fullPageWrites: await show('full_page_writes'),
    };
  });
  const versions = ['kafkajs', '@confluentinc/kafka-javascript', 'typeorm', 'pg', '@nestjs/microservices', 'pg-transactional-outbox']
    .map((name) => `${name} ${packageVersion(name)}`)
    .join(', ');
  return [
    ['CPU', `${cpus().length} cores, ${model}`],
    ['memory', `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`],
    ['OS / Node', `${osName}, Node ${process.version}`],
    ['PostgreSQL', `${pg.version}; SHOW fsync = ${pg.fsync}, synchronous_commit = ${pg.synchronousCommit}, wal_level = ${pg.walLevel}, full_page_writes = ${pg.fullPageWrites}, shared_buffers = ${pg.sharedBuffers}`],
    ['Kafka', `librdkafka ${mockLibrdkafka()} mock cluster from scripts/services.sh (a test double, 1 broker, topics auto-created with 4 partitions)`],
    ['packages', versions],
    ['commit', gitCommit()],
  ];
}

function safeRead(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function packageVersion(name: string): string {
  try {
    return JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

/** The librdkafka the running mock reports at its start (scripts/services.sh records it), else Debian's. */
function mockLibrdkafka(): string {
  return process.env.OUTBOX_TEST_KAFKA_MOCK_LIBRDKAFKA || debianVersion('librdkafka1');
}

function debianVersion(name: string): string {
  try {
    return execFileSync('dpkg-query', ['-W', '-f=${Version}', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '?';
  }
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head} + uncommitted changes` : head;
  } catch {
    return 'unknown';
  }
}

const firstLine = (text: string) => text.split('\n')[0].slice(0, 200);

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
