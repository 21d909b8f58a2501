// The fault actors of a chaos run: kills, stalls past the lease, a broker outage, a PostgreSQL restart.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KafkaBrokerControl } from '../support/kafka-broker.control';
import { requireService } from '../support/services';
import { rowsById } from './chaos.database';
import type { PostgresStopMode, Profile } from './chaos.profile';
import { batchIds, counters, HOLD_MS, killedRelayIds, log, relayIncidents, relays, REPO, runState, seconds, sleep, stallReports, stallViolations, unsettled } from './chaos.bookkeeping';
import { batchesMaybeInFlight, nextReport, replaceRelay, waitExit } from './chaos.relays';

export async function killer(profile: Profile, random: () => number, until: number): Promise<void> {
  const span = until - Date.now();
  const gap = span / (profile.kills + 1);
  for (let index = 0; index < profile.kills && !runState.stopping; index++) {
    const at = Date.now() + gap * (0.5 + random());
    while (Date.now() < at && !runState.stopping) await sleep(Math.min(200, at - Date.now()));
    if (runState.stopping) return;
    const candidates = relays.filter((relay) => relay.alive && !relay.stalled && !relay.killedByUs);
    if (candidates.length === 0) continue;
    // In the WAL mode, half the kills go to the instance streaming the slot (the others stand by).
    const streamer = profile.delivery === 'wal' && random() < 0.5 ? candidates.find((relay) => relay.relayId === runState.streamer) : undefined;
    const victim = streamer ?? candidates[Math.floor(random() * candidates.length)];
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
    if (victim.relayId === runState.streamer) counters.streamerKills += 1;
    log(`kill -9 relay ${victim.relayId} (pid ${victim.child.pid})${victim.relayId === runState.streamer ? ' (streaming the slot)' : ''} ${how}`);
    await waitExit(victim.child, 5_000);
    replaceRelay(victim);
  }
}

export async function staller(profile: Profile, random: () => number, at: number, moment: 'sending' | 'sent', postgres: string, schema: string): Promise<void> {
  while (Date.now() < at && !runState.stopping) await sleep(200);
  if (runState.stopping) return;
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
  const stalledBatches = batchesMaybeInFlight(victim.relayId);
  const batch = stalledBatches.join('+') || String(victim.lastBatch);
  const ids = stalledBatches.flatMap((number) => batchIds.get(`${victim.relayId}#${number}`) ?? []);
  // What the relays that took over did, just before the stalled one wakes up.
  const before = ids.length > 0 && !runState.postgresDown ? await rowsById(postgres, schema, ids).catch(() => undefined) : undefined;
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
  counters.stallsCompared += 1;
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

export async function brokerOutage(profile: Profile, at: number): Promise<void> {
  while (Date.now() < at && !runState.stopping) await sleep(200);
  if (runState.stopping) return;
  const broker = new KafkaBrokerControl();
  const alive = relays.filter((relay) => relay.alive).length;
  await broker.stop();
  runState.brokerDown = true;
  const downAt = Date.now();
  counters.brokerOutages += 1;
  counters.relaysAtBrokerOutages += alive;
  log(`Kafka broker DOWN (SIGUSR1) for ${seconds(profile.brokerOutageMs)} s; ${alive} relays running`);
  await sleep(profile.brokerOutageMs);
  await broker.start();
  runState.brokerDown = false;
  counters.brokerDownMs += Date.now() - downAt;
  log(`Kafka broker UP (SIGUSR2) after ${seconds(Date.now() - downAt)} s`);
}

/** `stopMode`: how `stop postgres` shuts the server down (OUTBOX_POSTGRES_STOP_MODE of services.sh). */
export function services(command: string, service?: string, stopMode: PostgresStopMode = 'fast'): Promise<string> {
  const args = service ? [command, service] : [command];
  const env = { ...process.env, OUTBOX_POSTGRES_STOP_MODE: stopMode };
  return new Promise((resolve, reject) => {
    execFile('bash', [join(REPO, 'scripts', 'services.sh'), ...args], { cwd: REPO, env, timeout: 120_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`services.sh ${args.join(' ')} failed: ${stderr || error.message}`)) : resolve(`${stdout}${stderr}`),
    );
  });
}

/** PostgreSQL stop (`fast` or `immediate`) + start on the same data dir: services.sh stop/resume, or pg_ctl restart on older scripts. */
export async function restartPostgres(profile: Profile, at: number, mode: PostgresStopMode, beforeStop?: () => Promise<void>): Promise<void> {
  while (Date.now() < at && !runState.stopping) await sleep(200);
  if (runState.stopping) return;
  await beforeStop?.();
  const script = readFileSync(join(REPO, 'scripts', 'services.sh'), 'utf8');
  const downAt = Date.now();
  runState.postgresDown = true;
  counters.postgresRestarts += 1;
  if (/\bresume\)/.test(script)) {
    log(`PostgreSQL: stop (services.sh stop postgres, pg_ctl -m ${mode})`);
    await services('stop', 'postgres', mode);
    await sleep(profile.postgresDownMs);
    await services('resume', 'postgres');
  } else {
    const dir = join(process.env.OUTBOX_SERVICES_DIR!, 'postgres');
    const port = new URL(requireService('postgres')).port;
    const options = `-p ${port} -k ${dir}/sock -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=on`;
    log(`PostgreSQL: pg_ctl restart -m ${mode}`);
    await new Promise<void>((resolve, reject) =>
      execFile('su', ['postgres', '-c', `/usr/lib/postgresql/15/bin/pg_ctl -D ${dir}/data -l ${dir}/postgres.log -w restart -m ${mode} -o '${options}'`], { cwd: '/' }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
  }
  runState.postgresDown = false;
  counters.postgresDownMs += Date.now() - downAt;
  log(`PostgreSQL back after ${seconds(Date.now() - downAt)} s`);
}
