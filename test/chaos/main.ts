/**
 * The chaos run (npm run chaos → scripts/chaos.sh → this file): one writer and several relay
 * processes on a fresh PostgreSQL schema and a fresh Kafka topic, while relays are killed with
 * SIGKILL and stalled with SIGSTOP past their lease, the Kafka broker goes down and comes back,
 * PostgreSQL restarts, transactions roll back on purpose and publishes fail at random. A consumer
 * ledger then checks what reached the topic against the outbox rows. See test/chaos/README.md.
 */
import './register-paths';
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaBrokerControl } from '../support/kafka-broker.control';
import { requireService, serviceEnv } from '../support/services';
import { analyse, stallFinding } from './analysis';
import { renderReport } from './chaos.report';
import { migrate, outboxRows, statusCounts } from './chaos.database';
import { parseArguments } from './chaos.profile';
import { errorText, prng, type WriterRecord, type WriterSettings } from './chaos.protocol';
import { batchSentAt, counters, unexpectedExits, killChildren, killedRelayIds, log, relays, remember, REPO, runState, seconds, sleep, stallReports, stallViolations, started, unsettled } from './chaos.bookkeeping';
import { batchesMaybeInFlight, startRelays, waitExit } from './chaos.relays';
import { brokerOutage, killer, restartPostgres, services, staller } from './chaos.faults';
import { KafkaLedger } from './ledger';
import { accountReplays, committedEvents, createAuditSlot, currentLsn, dropSlots, eventRows, prepareServer, sampleConfirmed, slotConfirmed, streamStarts, walRun } from './chaos.wal';
import { InboxConsumer } from './inbox-consumer';
async function main(): Promise<number> {
  const profile = parseArguments(process.argv.slice(2));
  const random = prng(profile.seed);
  const env = serviceEnv();
  const postgres = requireService('postgres');
  const brokers = requireService('kafka').split(',');
  if (!process.env.OUTBOX_SERVICES_DIR) process.env.OUTBOX_SERVICES_DIR = env.OUTBOX_SERVICES_DIR;
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  runState.dir = join(process.env.OUTBOX_SERVICES_DIR ?? join(REPO, '.services'), 'chaos-runs', runId);
  mkdirSync(runState.dir, { recursive: true });
  runState.timelineFile = join(runState.dir, 'timeline.log');
  runState.pidFile = process.env.CHAOS_PID_FILE ?? join(runState.dir, 'pids');
  const schema = `chaos_${runId.replace(/[^0-9a-z]/gi, '_').toLowerCase()}`;
  const topic = `chaos-orders-${runId}`;

  log(`run ${runId} (${profile.name}, seed ${profile.seed}${profile.selfTest.length ? `, SELF TEST ${profile.selfTest.join(',')}` : ''}): schema ${schema}, topic ${topic}, logs in ${runState.dir}`);
  await migrate(postgres, schema);
  const wal = profile.delivery === 'wal' ? walRun(runId, profile.walWrite) : undefined;
  if (wal) await prepareServer(postgres);

  const ledger = new KafkaLedger(brokers, topic, log);
  await ledger.start();
  const inboxConsumer = new InboxConsumer(brokers, topic, postgres, schema, log, profile.selfTest.includes('inbox'));
  await inboxConsumer.start();

  startRelays(
    {
      postgresUrl: postgres,
    schema,
    delivery: profile.delivery,
    slotName: wal?.slotName ?? '',
    walWrite: profile.walWrite,
    brokers,
    topic,
    batchSize: profile.batchSize,
    maxBatchesInFlight: profile.maxBatchesInFlight,
    leaseMs: profile.leaseMs,
    publishTimeoutMs: profile.publishTimeoutMs,
    pollIntervalMs: profile.pollIntervalMs,
    errorRate: profile.errorRate,
    },
    profile.relays,
  );
  const deadline = Date.now() + 60_000;
  while (relays.some((relay) => !relay.ready) && Date.now() < deadline) await sleep(100);
  if (relays.some((relay) => !relay.ready)) throw new Error(`relays did not start within 60 s: see ${runState.dir}/relay-*.log`);
  log(`${profile.relays} relays ready`);
  // The relays have created the slot and its publication: from here PostgreSQL keeps a copy of every commit.
  if (wal) await createAuditSlot(postgres, wal);
  const sampling = wal ? sampleConfirmed(postgres, wal, () => runState.stopping) : undefined;

  const ledgerFile = join(runState.dir, 'writer.jsonl');
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
    delivery: profile.delivery,
    slotName: wal?.slotName ?? '',
    walWrite: profile.walWrite,
  };
  const writerOutput = openSync(join(runState.dir, 'writer.log'), 'a');
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
    writer.once('exit', (code) => reject(new Error(`writer exited (code ${code}) before it was ready: see ${runState.dir}/writer.log`)));
  });
  const writeStart = Date.now();
  const writeEnd = writeStart + profile.writeSeconds * 1_000;
  const at = (fraction: number) => writeStart + fraction * profile.writeSeconds * 1_000;
  log(`writer started: ${profile.opsPerSecond} operations/s for ${profile.writeSeconds} s, ${Math.round(profile.rollbackRate * 100)}% rolled back on purpose`);

  const actors = [
    killer(profile, prng(profile.seed + 1), writeEnd - 2_000),
    ...profile.stalls.map((fraction, index) => staller(profile, prng(profile.seed + 10 + index), at(fraction), index % 2 === 0 ? 'sent' : 'sending', postgres, schema)),
    ...profile.brokerOutages.map((fraction) => brokerOutage(profile, at(fraction))),
    ...profile.postgresRestarts.map(({ at: fraction, mode }) => restartPostgres(profile, at(fraction), mode, wal && (() => recordConfirmed(postgres, wal)))),
  ];
  const writerCode = await writerDone;
  if (writerCode !== 0) throw new Error(`writer failed (exit code ${writerCode}): see ${runState.dir}/writer.log`);
  log('writer finished');
  // WAL mode: drained once the slot is confirmed past everything the writer wrote.
  let writtenUpTo: bigint | undefined;
  // PostgreSQL may be restarting right now.
  for (const deadline = Date.now() + 60_000; wal && writtenUpTo === undefined && Date.now() < deadline; ) {
    writtenUpTo = await currentLsn(postgres).catch(() => undefined);
    if (writtenUpTo === undefined) await sleep(500);
  }
  if (wal && writtenUpTo === undefined) throw new Error('PostgreSQL did not answer within 60 s of the writer finishing');
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
      const streamed = !wal || ((await slotConfirmed(postgres, wal.slotName)) ?? 0n) >= writtenUpTo!;
      if (!streamed) lastState += '; slot not confirmed past the last write';
      if ((counts.pending ?? 0) === 0 && caughtUp && inboxBehind === 0 && streamed) {
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
  runState.stopping = true;
  await sampling;
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
    for (const batch of batchesMaybeInFlight(relayId)) {
      const sender = `${relayId}#${batch}`;
      // A reason the relay gave itself (lease overrun, failed settle, late ack) stays: the bound counts those apart.
      const reason = unsettled.get(sender);
      if (reason === undefined || reason === 'send-failed') unsettled.set(sender, 'kill');
    }
  }
  const tableRows = await outboxRows(postgres, schema);
  // What a "rows left" failure is about, row by row: its lease says whose it was (the WAL stream's, a relay's, none).
  writeFileSync(join(runState.dir, 'rows-left.jsonl'), tableRows.filter((row) => row.status === 'pending' || row.status === 'dead').map((row) => JSON.stringify(row)).join('\n'));
  // WAL mode: the events are what PostgreSQL decoded from the audit slot; the table holds what the stream moved there.
  const events = wal ? await committedEvents(postgres, wal) : undefined;
  const rows = events ? eventRows(events, tableRows) : tableRows;
  const deliveries = ledger.deliveries();
  const deliveredBy = new Map<string, string[]>();
  for (const { id, relay, batch } of deliveries) deliveredBy.set(id, [...new Set([...(deliveredBy.get(id) ?? []), `${relay}#${batch}`])]);
  const replays =
    wal && events
      ? accountReplays({ events, starts: streamStarts(process.env.OUTBOX_SERVICES_DIR!, wal), deliveredBy, sentAt: batchSentAt, batchSize: profile.batchSize, maxBatchesInFlight: profile.maxBatchesInFlight, confirmed: [...wal.confirmedBeforeRestart, ...wal.confirmedSamples], restartsAt: wal.restartsAt, diverted: new Set(tableRows.map((row) => row.id)), unsettled })
      : undefined;
  if (wal) writeFileSync(join(runState.dir, 'slot-confirmed.log'), wal.confirmedSamples.map(({ at, lsn }) => `${new Date(at).toISOString()} ${lsn.toString(16)}`).join('\n'));
  if (wal) await dropSlots(postgres, wal).catch((error: unknown) => log(`dropping the run's slots failed: ${errorText(error)}`));
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
    streamReplayAllowance: replays?.allowance,
    selfTest: profile.selfTest,
  });
  if (replays) {
    result.figures.push(...replays.figures);
    result.findings.push({ check: 'each stream restart replayed at most what it had not confirmed', ok: replays.exceeded.length === 0, detail: replays.exceeded.join('; ') || `${replays.restarts} restarts checked` });
    result.evidence.push(...replays.exceeded);
  }
  // A fault of the database or the broker must never end an application process.
  result.findings.push({
    check: 'no relay process exited by itself',
    ok: counters.unexpectedExits === 0,
    detail: counters.unexpectedExits === 0 ? `${counters.relayStarts} processes, each ended only by the run's kills` : `${counters.unexpectedExits}: ${unexpectedExits.join('; ')}`,
  });
  result.findings.push(stallFinding(counters.stalls, counters.stallsCompared, stallViolations));
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
    ['profile / delivery / seed', `${profile.name} / ${profile.delivery}${profile.delivery === 'wal' ? ` (wal.write '${profile.walWrite}')` : ''} / ${profile.seed}`],
    ['relays (concurrent) / relay processes started', `${profile.relays} / ${counters.relayStarts}`],
    ['relay settings', `batchSize ${profile.batchSize}, maxBatchesInFlight ${profile.maxBatchesInFlight}, leaseMs ${profile.leaseMs}, publishTimeoutMs ${profile.publishTimeoutMs}, poll ${profile.pollIntervalMs} ms, backoff 100–2000 ms`],
    ['kills (SIGKILL) / of which timed on a batch (sent or acked, not settled)', `${counters.kills} / ${counters.killsOnSend}`],
    ...(wal ? [['kills of the instance streaming the slot', counters.streamerKills] as [string, number]] : []),
    ['relays that died by themselves', counters.unexpectedExits],
    ['stalls (SIGSTOP > lease)', `${counters.stalls} (${seconds(counters.stallMs)} s in total, lease ${seconds(profile.leaseMs)} s)`],
    ['Kafka broker outages', `${counters.brokerOutages} (${seconds(counters.brokerDownMs)} s down in total)`],
    ['PostgreSQL restarts', `${counters.postgresRestarts} (${profile.postgresRestarts.map((restart) => restart.mode).join(', ')}; ${seconds(counters.postgresDownMs)} s down in total)`],
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
    runDir: runState.dir,
  });
  writeFileSync(join(runState.dir, 'report.md'), `${report}\n`);
  console.log(`\n${report}\n`);
  return failed.length === 0 ? 0 : 1;
}

/** The slot's confirmed position just before PostgreSQL stops: what a restart should replay after, at most. */
async function recordConfirmed(postgres: string, wal: ReturnType<typeof walRun>): Promise<void> {
  wal.restartsAt.push(Date.now());
  const lsn = await slotConfirmed(postgres, wal.slotName).catch(() => undefined);
  if (lsn !== undefined) wal.confirmedBeforeRestart.push({ at: Date.now(), lsn });
}

// ------------------------------------------------------------------------------------------------
// Never leave anything behind: children by pid, and the services in a usable state.
// ------------------------------------------------------------------------------------------------

async function restoreServices(): Promise<void> {
  if (runState.brokerDown) {
    await new KafkaBrokerControl().start().catch(() => undefined);
    runState.brokerDown = false;
  }
  if (runState.postgresDown && existsSync(join(REPO, 'scripts', 'services.sh'))) {
    await services('resume', 'postgres').catch(() => undefined);
    runState.postgresDown = false;
  }
}

process.on('exit', killChildren);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    runState.stopping = true;
    killChildren();
    void restoreServices().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

main().then(
  (code) => {
    runState.stopping = true;
    killChildren();
    process.exit(code);
  },
  async (error: unknown) => {
    log(`chaos run failed: ${error instanceof Error ? error.stack : String(error)}`);
    runState.stopping = true;
    killChildren();
    await restoreServices();
    process.exit(2);
  },
);
