/**
 * The chaos run (npm run chaos → scripts/chaos.sh → this file): one writer and several relay
 * processes on a fresh PostgreSQL schema and a fresh Kafka topic, while relays are killed with
 * SIGKILL and stalled with SIGSTOP past their lease, the Kafka broker goes down and comes back,
 * PostgreSQL restarts, transactions roll back on purpose and publishes fail at random. A consumer
 * ledger then checks what reached the topic against the outbox rows. See test/chaos/README.md.
 */
import './register-paths';
import 'reflect-metadata';
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaBrokerControl } from '../support/kafka-broker.control';
import { requireService, serviceEnv } from '../support/services';
import { analyse, type UnsettledReason } from './analysis';
import { renderReport } from './chaos.report';
import { migrate, outboxRows, rowsById, statusCounts } from './chaos.database';
import { parseArguments, type Profile } from './chaos.profile';
import { errorText, prng, type RelayReport, type RelaySettings, type WriterRecord, type WriterSettings } from './chaos.protocol';
import { KafkaLedger } from './ledger';
import { InboxConsumer } from './inbox-consumer';

// ------------------------------------------------------------------------------------------------
// Bookkeeping shared by the fault actors
// ------------------------------------------------------------------------------------------------

const REPO = join(__dirname, '..', '..', '..', '..');
/** How long an armed relay holds an acknowledged batch before settling it (see ChaosTransport.arm). */
const HOLD_MS = 300;
const started = Date.now();
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number) => (ms / 1_000).toFixed(1);

let runDir = '';
let timelineFile = '';
function log(line: string): void {
  const text = `[chaos +${seconds(Date.now() - started).padStart(6)}s] ${line}`;
  console.log(text);
  if (timelineFile) appendFileSync(timelineFile, `${text}\n`);
}

interface RelayProcess {
  slot: number;
  relayId: string;
  child: ChildProcess;
  ready: boolean;
  alive: boolean;
  stalled: boolean;
  killedByUs: boolean;
  lastBatch: number;
  /** Resolvers waiting for this relay's next 'sending' (batch leaving) or 'sent' (broker answered, settle next) report. */
  waiters: Array<{ kind: 'sending' | 'sent'; resolve: (report: BatchReport) => void }>;
}

const children = new Set<ChildProcess>();
const relays: RelayProcess[] = [];
const unsettled = new Map<string, UnsettledReason>();
const batchIds = new Map<string, string[]>();
const counters = {
  relayStarts: 0,
  kills: 0,
  killsOnSend: 0,
  unexpectedExits: 0,
  stalls: 0,
  stallMs: 0,
  brokerOutages: 0,
  brokerDownMs: 0,
  relaysAtBrokerOutages: 0,
  postgresRestarts: 0,
  postgresDownMs: 0,
  injected: 0,
  batches: 0,
  sendFailures: 0,
  lateAcks: 0,
  settleFailures: 0,
  leaseOverruns: 0,
  leaseOverrunRows: 0,
};
const killedRelayIds: string[] = [];
/** What each relay said about its own batches (lease overruns, settle failures, late acks), for the stall report. */
const relayIncidents = new Map<string, string[]>();
const noteIncident = (relayId: string, text: string) => relayIncidents.set(relayId, [...(relayIncidents.get(relayId) ?? []), text]);
const stallReports: string[] = [];
const stallViolations: string[] = [];
let brokerDown = false;
let postgresDown = false;
let pidFile = '';

function remember(child: ChildProcess): void {
  children.add(child);
  if (pidFile && child.pid) appendFileSync(pidFile, `${child.pid}\n`);
  child.once('exit', () => children.delete(child));
}

/** Ends every child we started, by pid (stopped ones are continued first so that nothing lingers). */
function killChildren(): void {
  for (const child of children) {
    try {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Relays
// ------------------------------------------------------------------------------------------------

function onRelayReport(relay: RelayProcess, report: RelayReport): void {
  switch (report.t) {
    case 'ready':
      relay.ready = true;
      break;
    case 'sending': {
      counters.injected += report.injected;
      if (report.size === 0) break;
      const sender = `${report.relayId}#${report.batch}`;
      // A claim published in waves reports each wave under its batch number.
      if (!batchIds.has(sender)) counters.batches += 1;
      relay.lastBatch = Math.max(relay.lastBatch, report.batch);
      batchIds.set(sender, [...(batchIds.get(sender) ?? []), ...report.ids]);
      wake(relay, report);
      break;
    }
    case 'sent': {
      const sender = `${report.relayId}#${report.batch}`;
      if (report.late && report.ok > 0) {
        counters.lateAcks += 1;
        unsettled.set(sender, 'late-ack');
        noteIncident(report.relayId, `batch ${report.batch} acknowledged after ${report.elapsedMs} ms, past publishTimeoutMs`);
      } else if (report.failed > 0) {
        counters.sendFailures += 1;
        if (!unsettled.has(sender)) unsettled.set(sender, 'send-failed');
      }
      // Waiters for 'sent' want the window between the broker's acknowledgement and the settle.
      if (report.ok > 0) wake(relay, report);
      break;
    }
    case 'incident': {
      const sender = `${report.relayId}#${report.batch}`;
      if (report.kind === 'settle-failed') counters.settleFailures += 1;
      else {
        counters.leaseOverruns += 1;
        counters.leaseOverrunRows += report.rows;
      }
      unsettled.set(sender, report.kind);
      noteIncident(report.relayId, `batch ${report.batch} ${report.kind}: "${report.text.slice(0, 140)}"`);
      log(`relay ${report.relayId} batch ${report.batch}: ${report.kind} (${report.text.slice(0, 160)})`);
      break;
    }
  }
}

function startRelay(slot: number, generation: number, base: Omit<RelaySettings, 'relayId'>): RelayProcess {
  const relayId = `chaos-r${slot}-g${generation}`;
  const settings: RelaySettings = { ...base, relayId };
  const output = openSync(join(runDir, `relay-${relayId}.log`), 'a');
  const child = fork(join(__dirname, 'relay.main.js'), [], {
    env: { ...process.env, CHAOS_RELAY: JSON.stringify(settings) },
    stdio: ['ignore', output, output, 'ipc'],
    execArgv: [],
  });
  closeSync(output);
  remember(child);
  counters.relayStarts += 1;
  const relay: RelayProcess = { slot, relayId, child, ready: false, alive: true, stalled: false, killedByUs: false, lastBatch: 0, waiters: [] };
  child.on('message', (message) => onRelayReport(relay, message as RelayReport));
  child.once('exit', (code, signal) => {
    relay.alive = false;
    if (!relay.killedByUs && !stopping) {
      counters.unexpectedExits += 1;
      killedRelayIds.push(relayId); // its batch in flight is as unsettled as a killed relay's
      log(`relay ${relayId} exited by itself (code ${code}, signal ${signal}): see relay-${relayId}.log; starting a replacement`);
      replaceRelay(relay);
    }
  });
  relays[slot] = relay;
  return relay;
}

let stopping = false;
let relayBase: Omit<RelaySettings, 'relayId'>;
const generations: number[] = [];
function replaceRelay(old: RelayProcess): RelayProcess {
  generations[old.slot] = (generations[old.slot] ?? 0) + 1;
  return startRelay(old.slot, generations[old.slot], relayBase);
}

/**
 * The batches of a relay that may have been claimed and not settled when it was killed or stopped:
 * its last `maxBatchesInFlight` claims (numbered in claim order), since it claims only while fewer
 * are unsettled. Only those that sent something are known here; the others cannot cause duplicates.
 */
function batchesMaybeInFlight(relayId: string, maxBatchesInFlight: number): number[] {
  const sent = [...batchIds.keys()].filter((sender) => sender.startsWith(`${relayId}#`)).map((sender) => Number(sender.split('#')[1]));
  const last = Math.max(0, ...sent);
  return sent.filter((batch) => batch > last - maxBatchesInFlight).sort((a, b) => a - b);
}

type BatchReport = Extract<RelayReport, { t: 'sending' | 'sent' }>;

function wake(relay: RelayProcess, report: BatchReport): void {
  const ready = relay.waiters.filter((waiter) => waiter.kind === report.t);
  relay.waiters = relay.waiters.filter((waiter) => waiter.kind !== report.t);
  for (const waiter of ready) waiter.resolve(report);
}

/** The relay's next batch leaving ('sending') or answered by the broker ('sent': the relay settles it next). */
function nextReport(relay: RelayProcess, kind: 'sending' | 'sent', timeoutMs: number): Promise<BatchReport | undefined> {
  return new Promise((resolve) => {
    const waiter = { kind, resolve: (report: BatchReport) => (clearTimeout(timer), resolve(report)) };
    const timer = setTimeout(() => {
      relay.waiters = relay.waiters.filter((candidate) => candidate !== waiter);
      resolve(undefined);
    }, timeoutMs);
    relay.waiters.push(waiter);
  });
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// ------------------------------------------------------------------------------------------------
// Fault actors
// ------------------------------------------------------------------------------------------------

async function killer(profile: Profile, random: () => number, until: number): Promise<void> {
  const span = until - Date.now();
  const gap = span / (profile.kills + 1);
  for (let index = 0; index < profile.kills && !stopping; index++) {
    const at = Date.now() + gap * (0.5 + random());
    while (Date.now() < at && !stopping) await sleep(Math.min(200, at - Date.now()));
    if (stopping) return;
    const candidates = relays.filter((relay) => relay.alive && !relay.stalled && !relay.killedByUs);
    if (candidates.length === 0) continue;
    const victim = candidates[Math.floor(random() * candidates.length)];
    // A third of the kills land between the broker's answer and the settle (the duplicate window), a
    // third while a batch is on its way to Kafka, a third anywhere.
    let how = 'at a random moment';
    const dice = random();
    if (dice < 0.67 && victim.ready) {
      const kind = dice < 0.33 ? 'sent' : 'sending';
      if (kind === 'sent') victim.child.send({ t: 'arm', holdMs: HOLD_MS });
      const report = await nextReport(victim, kind, 2_500);
      if (report) await sleep(Math.floor(random() * (kind === 'sent' ? HOLD_MS - 100 : 40)));
      if (report) {
        how = kind === 'sent' ? `after the broker answered batch ${report.batch} (${report.size} messages), before its settle` : `${report.size} message(s) into batch ${report.batch}`;
        counters.killsOnSend += 1;
      }
    }
    if (!victim.alive || victim.stalled) continue;
    victim.killedByUs = true;
    victim.child.kill('SIGKILL');
    counters.kills += 1;
    killedRelayIds.push(victim.relayId);
    log(`kill -9 relay ${victim.relayId} (pid ${victim.child.pid}) ${how}`);
    await waitExit(victim.child, 5_000);
    replaceRelay(victim);
  }
}

async function staller(profile: Profile, random: () => number, at: number, moment: 'sending' | 'sent', postgres: string, schema: string): Promise<void> {
  while (Date.now() < at && !stopping) await sleep(200);
  if (stopping) return;
  const candidates = relays.filter((relay) => relay.alive && relay.ready && !relay.stalled && !relay.killedByUs);
  if (candidates.length === 0) return log('stall skipped: no ready relay');
  const victim = candidates[Math.floor(random() * candidates.length)];
  victim.stalled = true;
  if (moment === 'sent') victim.child.send({ t: 'arm', holdMs: HOLD_MS });
  const sending = await nextReport(victim, moment, 5_000);
  if (sending && moment === 'sent') await sleep(Math.floor(random() * (HOLD_MS - 100)));
  if (!victim.alive) {
    victim.stalled = false;
    return;
  }
  victim.child.kill('SIGSTOP');
  const stoppedAt = Date.now();
  counters.stalls += 1;
  const state = moment === 'sent' ? 'answered by the broker, not yet settled' : 'on its way to the broker';
  log(`SIGSTOP relay ${victim.relayId} ${sending ? `with batch ${sending.batch} (${sending.size} messages) ${state}` : '(idle)'} for ${seconds(profile.stallMs)} s (lease ${profile.leaseMs} ms)`);
  await sleep(profile.stallMs);
  // Every batch it may have held unsettled when stopped (reports sent just before the stop have arrived by now).
  const stalledBatches = batchesMaybeInFlight(victim.relayId, profile.maxBatchesInFlight);
  const batch = stalledBatches.join('+') || String(victim.lastBatch);
  const ids = stalledBatches.flatMap((number) => batchIds.get(`${victim.relayId}#${number}`) ?? []);
  // What the relays that took over did, just before the stalled one wakes up.
  const before = ids.length > 0 && !postgresDown ? await rowsById(postgres, schema, ids).catch(() => undefined) : undefined;
  if (!before) stallReports.push(`${victim.relayId} batch ${batch}: ${ids.length === 0 ? 'was idle when stopped' : 'rows not readable at SIGCONT (database unavailable)'}; not compared`);
  const incidentsBefore = relayIncidents.get(victim.relayId)?.length ?? 0;
  victim.child.kill('SIGCONT');
  counters.stallMs += Date.now() - stoppedAt;
  for (const number of stalledBatches) unsettled.set(`${victim.relayId}#${number}`, 'stall');
  victim.stalled = false;
  log(`SIGCONT relay ${victim.relayId} after ${seconds(Date.now() - stoppedAt)} s`);
  await sleep(4 * profile.publishTimeoutMs + 1_000);
  if (!before) return;
  let after: Awaited<ReturnType<typeof rowsById>> | undefined;
  for (let attempt = 0; attempt < 10 && !after; attempt++) {
    after = await rowsById(postgres, schema, ids).catch(() => undefined);
    if (!after) await sleep(2_000); // PostgreSQL may be restarting
  }
  if (!after) {
    stallReports.push(`${victim.relayId} batch ${batch}: could not read its rows after SIGCONT (database unavailable)`);
    return;
  }
  let overwritten = 0;
  for (const row of before) {
    const now = after.find((candidate) => candidate.id === row.id);
    if (row.status === 'published' && (!now || now.status !== 'published' || now.publishedAt !== row.publishedAt)) {
      overwritten += 1;
      stallViolations.push(
        `stalled relay ${victim.relayId} batch ${batch}: row ${row.position} was published at ${row.publishedAt} before SIGCONT; ` +
          `after SIGCONT it is ${now?.status} (published at ${now?.publishedAt})`,
      );
    }
  }
  const settledBeforeStop = before.filter((row) => row.status === 'published' && Number(row.publishedMs) < stoppedAt).length;
  const publishedByOthers = before.filter((row) => row.status === 'published' && Number(row.publishedMs) >= stoppedAt).length;
  const leasedByOthers = before.filter((row) => row.status === 'pending' && row.leaseOwner && row.leaseOwner !== victim.relayId).length;
  const stillOwn = before.filter((row) => row.status === 'pending' && row.leaseOwner === victim.relayId).length;
  const said = (relayIncidents.get(victim.relayId) ?? []).slice(incidentsBefore);
  stallReports.push(
    `${victim.relayId} stopped ${moment === 'sent' ? 'after the broker acknowledged' : 'while sending'} batch ${batch} (${ids.length} rows) for ${seconds(profile.stallMs)} s: ` +
      `at SIGCONT ${publishedByOthers} rows had been re-published by the relays that took over, ${leasedByOthers} were leased by them, ` +
      `${settledBeforeStop} had been settled before the stop, ${stillOwn} were still its own; after SIGCONT it changed ${overwritten} of them` +
      (said.length ? `; it reported: ${said.join('; ')}` : ''),
  );
}

async function brokerOutage(profile: Profile, at: number): Promise<void> {
  while (Date.now() < at && !stopping) await sleep(200);
  if (stopping) return;
  const broker = new KafkaBrokerControl();
  const alive = relays.filter((relay) => relay.alive).length;
  await broker.stop();
  brokerDown = true;
  const downAt = Date.now();
  counters.brokerOutages += 1;
  counters.relaysAtBrokerOutages += alive;
  log(`Kafka broker DOWN (SIGUSR1) for ${seconds(profile.brokerOutageMs)} s; ${alive} relays running`);
  await sleep(profile.brokerOutageMs);
  await broker.start();
  brokerDown = false;
  counters.brokerDownMs += Date.now() - downAt;
  log(`Kafka broker UP (SIGUSR2) after ${seconds(Date.now() - downAt)} s`);
}

function services(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [join(REPO, 'scripts', 'services.sh'), ...args], { cwd: REPO, env: process.env, timeout: 120_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`services.sh ${args.join(' ')} failed: ${stderr || error.message}`)) : resolve(`${stdout}${stderr}`),
    );
  });
}

/** PostgreSQL stop + start on the same data dir: services.sh stop/resume, or pg_ctl restart on older scripts. */
async function restartPostgres(profile: Profile, at: number): Promise<void> {
  while (Date.now() < at && !stopping) await sleep(200);
  if (stopping) return;
  const script = readFileSync(join(REPO, 'scripts', 'services.sh'), 'utf8');
  const downAt = Date.now();
  postgresDown = true;
  counters.postgresRestarts += 1;
  if (/\bresume\)/.test(script)) {
    log('PostgreSQL: stop (services.sh stop postgres, pg_ctl -m fast)');
    await services('stop', 'postgres');
    await sleep(profile.postgresDownMs);
    await services('resume', 'postgres');
  } else {
    const dir = join(process.env.OUTBOX_SERVICES_DIR!, 'postgres');
    const port = new URL(requireService('postgres')).port;
    const options = `-p ${port} -k ${dir}/sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on`;
    log('PostgreSQL: pg_ctl restart -m fast');
    await new Promise<void>((resolve, reject) =>
      execFile('su', ['postgres', '-c', `/usr/lib/postgresql/15/bin/pg_ctl -D ${dir}/data -l ${dir}/postgres.log -w restart -m fast -o '${options}'`], { cwd: '/' }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
  postgresDown = false;
  counters.postgresDownMs += Date.now() - downAt;
  log(`PostgreSQL back after ${seconds(Date.now() - downAt)} s`);
}

// ------------------------------------------------------------------------------------------------
// The run
// ------------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  const profile = parseArguments(process.argv.slice(2));
  const random = prng(profile.seed);
  const env = serviceEnv();
  const postgres = requireService('postgres');
  const brokers = requireService('kafka').split(',');
  if (!process.env.OUTBOX_SERVICES_DIR) process.env.OUTBOX_SERVICES_DIR = env.OUTBOX_SERVICES_DIR;
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  runDir = join(process.env.OUTBOX_SERVICES_DIR ?? join(REPO, '.services'), 'chaos-runs', runId);
  mkdirSync(runDir, { recursive: true });
  timelineFile = join(runDir, 'timeline.log');
  pidFile = process.env.CHAOS_PID_FILE ?? join(runDir, 'pids');
  const schema = `chaos_${runId.replace(/[^0-9a-z]/gi, '_').toLowerCase()}`;
  const topic = `chaos-orders-${runId}`;

  log(`run ${runId} (${profile.name}, seed ${profile.seed}${profile.selfTest.length ? `, SELF TEST ${profile.selfTest.join(',')}` : ''}): schema ${schema}, topic ${topic}, logs in ${runDir}`);
  await migrate(postgres, schema);

  const ledger = new KafkaLedger(brokers, topic, log);
  await ledger.start();
  const inboxConsumer = new InboxConsumer(brokers, topic, postgres, schema, log, profile.selfTest.includes('inbox'));
  await inboxConsumer.start();

  relayBase = {
    postgresUrl: postgres,
    schema,
    brokers,
    topic,
    batchSize: profile.batchSize,
    maxBatchesInFlight: profile.maxBatchesInFlight,
    leaseMs: profile.leaseMs,
    publishTimeoutMs: profile.publishTimeoutMs,
    pollIntervalMs: profile.pollIntervalMs,
    errorRate: profile.errorRate,
  };
  for (let slot = 0; slot < profile.relays; slot++) {
    generations[slot] = 0;
    startRelay(slot, 0, relayBase);
  }
  const deadline = Date.now() + 60_000;
  while (relays.some((relay) => !relay.ready) && Date.now() < deadline) await sleep(100);
  if (relays.some((relay) => !relay.ready)) throw new Error(`relays did not start within 60 s: see ${runDir}/relay-*.log`);
  log(`${profile.relays} relays ready`);

  const ledgerFile = join(runDir, 'writer.jsonl');
  writeFileSync(ledgerFile, '');
  const writerSettings: WriterSettings = {
    postgresUrl: postgres,
    schema,
    topic,
    durationMs: profile.writeSeconds * 1_000,
    opsPerSecond: profile.opsPerSecond,
    concurrency: profile.concurrency,
    rollbackRate: profile.rollbackRate,
    ledgerFile,
    seed: profile.seed,
  };
  const writerOutput = openSync(join(runDir, 'writer.log'), 'a');
  const writer = fork(join(__dirname, 'writer.main.js'), [], {
    env: { ...process.env, CHAOS_WRITER: JSON.stringify(writerSettings) },
    stdio: ['ignore', writerOutput, writerOutput, 'ipc'],
    execArgv: [],
  });
  closeSync(writerOutput);
  remember(writer);
  const writerDone = new Promise<number | null>((resolve) => writer.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    writer.once('message', () => resolve());
    writer.once('exit', (code) => reject(new Error(`writer exited (code ${code}) before it was ready: see ${runDir}/writer.log`)));
  });
  const writeStart = Date.now();
  const writeEnd = writeStart + profile.writeSeconds * 1_000;
  const at = (fraction: number) => writeStart + fraction * profile.writeSeconds * 1_000;
  log(`writer started: ${profile.opsPerSecond} operations/s for ${profile.writeSeconds} s, ${Math.round(profile.rollbackRate * 100)}% rolled back on purpose`);

  const actors = [
    killer(profile, prng(profile.seed + 1), writeEnd - 2_000),
    ...profile.stalls.map((fraction, index) => staller(profile, prng(profile.seed + 10 + index), at(fraction), index % 2 === 0 ? 'sent' : 'sending', postgres, schema)),
    ...profile.brokerOutages.map((fraction) => brokerOutage(profile, at(fraction))),
    ...profile.postgresRestarts.map((fraction) => restartPostgres(profile, at(fraction))),
  ];
  const writerCode = await writerDone;
  if (writerCode !== 0) throw new Error(`writer failed (exit code ${writerCode}): see ${runDir}/writer.log`);
  log('writer finished');
  await Promise.all(actors);
  log('fault injection finished');
  void random;

  // --- drain ---------------------------------------------------------------------------------
  const drainStart = Date.now();
  const drainDeadline = drainStart + profile.drainTimeoutMs;
  let drained = false;
  let lastState = '';
  while (Date.now() < drainDeadline) {
    try {
      const counts = await statusCounts(postgres, schema);
      const { caughtUp, behind } = await ledger.caughtUp();
      const total = Object.values(counts).reduce((sum, n) => sum + n, 0);
      lastState = `${counts.pending ?? 0} pending, ${counts.dead ?? 0} dead, ${counts.published ?? 0} published of ${total}; ledger ${ledger.count} records, ${behind} behind`;
      const inboxBehind = (await inboxConsumer.caughtUp()).behind;
      lastState += `; inbox consumer ${inboxBehind} behind`;
      if ((counts.pending ?? 0) === 0 && caughtUp && inboxBehind === 0) {
        const ids = new Set(ledger.deliveries().map((delivery) => delivery.id));
        const rows = await outboxRows(postgres, schema);
        if (rows.every((row) => ids.has(row.id) || row.status !== 'published')) {
          drained = true;
          break;
        }
      }
    } catch (error) {
      lastState = `drain probe failed: ${errorText(error)}`;
    }
    await sleep(1_000);
  }
  log(drained ? `drained in ${seconds(Date.now() - drainStart)} s (${lastState})` : `NOT drained after ${seconds(profile.drainTimeoutMs)} s: ${lastState}`);

  // --- stop relays gracefully, then let the ledger catch up with anything they sent last ----------
  stopping = true;
  await Promise.all(
    relays.map(async (relay) => {
      if (!relay.alive) return;
      relay.child.kill('SIGTERM');
      if (!(await waitExit(relay.child, 10_000))) relay.child.kill('SIGKILL');
    }),
  );
  const catchUpDeadline = Date.now() + 30_000;
  while (Date.now() < catchUpDeadline) {
    const { caughtUp } = await ledger.caughtUp().catch(() => ({ caughtUp: false }));
    const inboxCaughtUp = (await inboxConsumer.caughtUp().catch(() => ({ caughtUp: false }))).caughtUp;
    if (caughtUp && inboxCaughtUp) break;
    await sleep(500);
  }
  await sleep(1_000);
  await ledger.caughtUp().catch(() => undefined);

  // --- analysis --------------------------------------------------------------------------------
  for (const relayId of killedRelayIds) {
    for (const batch of batchesMaybeInFlight(relayId, profile.maxBatchesInFlight)) unsettled.set(`${relayId}#${batch}`, 'kill');
  }
  const rows = await outboxRows(postgres, schema);
  const deliveries = ledger.deliveries();
  await ledger.stop();
  const writerRecords = readFileSync(ledgerFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as WriterRecord);
  const outcomes = (outcome: WriterRecord['outcome']) => writerRecords.filter((record) => record.outcome === outcome).length;
  const result = analyse({
    rows,
    deliveries,
    writer: writerRecords,
    batchSize: profile.batchSize,
    maxBatchesInFlight: profile.maxBatchesInFlight,
    unsettled,
    kills: counters.kills + counters.unexpectedExits,
    stalls: counters.stalls,
    relaysAtBrokerOutages: counters.relaysAtBrokerOutages,
    selfTest: profile.selfTest,
  });
  if (stallViolations.length > 0) result.findings.push({ check: 'stalled relay left rows taken over by others alone', ok: false, detail: `${stallViolations.length} rows changed` });
  else result.findings.push({ check: 'stalled relay left rows taken over by others alone', ok: true, detail: `${counters.stalls} stalls checked` });
  const inbox = await inboxConsumer.findings(rows.filter((row) => row.status === 'published').map((row) => row.id));
  await inboxConsumer.stop();
  result.findings.push(...inbox.findings);
  result.figures.push(...inbox.figures);
  if (ledger.malformed.length > 0) result.findings.push({ check: 'well-formed records (id, key and headers agree)', ok: false, detail: String(ledger.malformed.length) });
  const planned = Math.min(20, profile.kills);
  result.findings.push({
    check: 'faults injected as planned',
    ok: counters.kills >= planned && counters.stalls === profile.stalls.length && counters.brokerOutages === profile.brokerOutages.length && counters.postgresRestarts === profile.postgresRestarts.length && drained,
    detail: `${counters.kills} kills (≥ ${planned}), ${counters.stalls}/${profile.stalls.length} stalls, ${counters.brokerOutages}/${profile.brokerOutages.length} broker outages, ${counters.postgresRestarts}/${profile.postgresRestarts.length} PostgreSQL restarts, drained: ${drained}`,
  });

  const duration = Date.now() - started;
  const parameters: Array<[string, string | number]> = [
    ['profile / seed', `${profile.name} / ${profile.seed}`],
    ['relays (concurrent) / relay processes started', `${profile.relays} / ${counters.relayStarts}`],
    ['relay settings', `batchSize ${profile.batchSize}, maxBatchesInFlight ${profile.maxBatchesInFlight}, leaseMs ${profile.leaseMs}, publishTimeoutMs ${profile.publishTimeoutMs}, poll ${profile.pollIntervalMs} ms, backoff 100–2000 ms`],
    ['kills (SIGKILL) / of which timed on a batch (sent or acked, not settled)', `${counters.kills} / ${counters.killsOnSend}`],
    ['relays that died by themselves', counters.unexpectedExits],
    ['stalls (SIGSTOP > lease)', `${counters.stalls} (${seconds(counters.stallMs)} s in total, lease ${seconds(profile.leaseMs)} s)`],
    ['Kafka broker outages', `${counters.brokerOutages} (${seconds(counters.brokerDownMs)} s down in total)`],
    ['PostgreSQL restarts', `${counters.postgresRestarts} (${seconds(counters.postgresDownMs)} s down in total)`],
    ['writer transactions', `${writerRecords.length}: ${outcomes('committed')} committed, ${outcomes('rolled-back')} rolled back on purpose, ${outcomes('failed')} failed (database down), ${outcomes('uncertain')} uncertain commits`],
    ['injected publish errors', counters.injected],
    ['batches sent / failed sends / late acks', `${counters.batches} / ${counters.sendFailures} / ${counters.lateAcks}`],
    ['settle failures / lease overruns reported by relays', `${counters.settleFailures} / ${counters.leaseOverruns} (${counters.leaseOverrunRows} rows)`],
    ['duration (write phase / drain / total)', `${profile.writeSeconds} s / ${seconds(Date.now() - drainStart)} s / ${seconds(duration)} s`],
  ];

  const failed = result.findings.filter((finding) => !finding.ok);
  const report = renderReport({
    title: `Chaos run ${runId}${profile.selfTest.length ? ` (SELF TEST: ${profile.selfTest.join(', ')})` : ''}`,
    parameters,
    analysis: result,
    stallReports,
    evidence: [...result.evidence, ...stallViolations, ...ledger.malformed.slice(0, 10)],
    runDir,
  });
  writeFileSync(join(runDir, 'report.md'), `${report}\n`);
  console.log(`\n${report}\n`);
  return failed.length === 0 ? 0 : 1;
}

// ------------------------------------------------------------------------------------------------
// Never leave anything behind: children by pid, and the services in a usable state.
// ------------------------------------------------------------------------------------------------

async function restoreServices(): Promise<void> {
  if (brokerDown) {
    await new KafkaBrokerControl().start().catch(() => undefined);
    brokerDown = false;
  }
  if (postgresDown && existsSync(join(REPO, 'scripts', 'services.sh'))) {
    await services('resume', 'postgres').catch(() => undefined);
    postgresDown = false;
  }
}

process.on('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    stopping = true;
    killChildren();
    void restoreServices().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

main().then(
  (code) => {
    stopping = true;
    killChildren();
    process.exit(code);
  },
  async (error: unknown) => {
    log(`chaos run failed: ${error instanceof Error ? error.stack : String(error)}`);
    stopping = true;
    killChildren();
    await restoreServices();
    process.exit(2);
  },
);
