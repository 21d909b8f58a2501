// The relay processes of a chaos run: started, replaced when they die, and what their reports say.
import { closeSync, openSync } from 'node:fs';
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { STREAM_BATCH_BASE, type RelayReport, type RelaySettings } from './chaos.protocol';
import { batchIds, batchSentAt, counters, unexpectedExits, killedRelayIds, log, noteIncident, relays, remember, runState, settledBatches, unsettled, type BatchReport, type RelayProcess } from './chaos.bookkeeping';

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
      if (!batchIds.has(sender)) {
        counters.batches += 1;
        batchSentAt.set(sender, Date.now());
      }
      if (report.batch >= STREAM_BATCH_BASE) runState.streamer = report.relayId;
      if (report.batch < STREAM_BATCH_BASE) relay.lastBatch = Math.max(relay.lastBatch, report.batch);
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
    case 'settled':
      settledBatches.add(`${report.relayId}#${report.batch}`);
      break;
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

export function startRelay(slot: number, generation: number, base: Omit<RelaySettings, 'relayId'>): RelayProcess {
  const relayId = `chaos-r${slot}-g${generation}`;
  const settings: RelaySettings = { ...base, relayId };
  const output = openSync(join(runState.dir, `relay-${relayId}.log`), 'a');
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
    if (!relay.killedByUs && !runState.stopping) {
      counters.unexpectedExits += 1;
      unexpectedExits.push(`relay ${relayId} (code ${code}, signal ${signal}; relay-${relayId}.log)`);
      killedRelayIds.push(relayId); // its batch in flight is as unsettled as a killed relay's
      log(`relay ${relayId} exited by itself (code ${code}, signal ${signal}): see relay-${relayId}.log; starting a replacement`);
      replaceRelay(relay);
    }
  });
  relays[slot] = relay;
  return relay;
}

let relayBase: Omit<RelaySettings, 'relayId'> | undefined;
const generations: number[] = [];

/** Starts `count` relay processes with `base` settings; replacements get the same settings. */
export function startRelays(base: Omit<RelaySettings, 'relayId'>, count: number): void {
  relayBase = base;
  for (let slot = 0; slot < count; slot++) {
    generations[slot] = 0;
    startRelay(slot, 0, base);
  }
}
export function replaceRelay(old: RelayProcess): RelayProcess {
  generations[old.slot] = (generations[old.slot] ?? 0) + 1;
  return startRelay(old.slot, generations[old.slot], relayBase!);
}

/**
 * The batches of a relay that may have been claimed and not settled when it was killed or stopped:
 * those that sent something and whose settle it has not reported. Not simply its last
 * `maxBatchesInFlight` claims: batches settle out of order (claim 66 still on its way while 67
 * settled and 68 was claimed). A settle reported just before the end may not have arrived; such a
 * batch is counted in too, which only makes the ledger more lenient about a batch that, being
 * settled, caused no duplicate. At most `maxBatchesInFlight` of them were really unsettled, which
 * is what the duplicate bound counts.
 */
export function batchesMaybeInFlight(relayId: string): number[] {
  return [...batchIds.keys()]
    .filter((sender) => sender.startsWith(`${relayId}#`) && !settledBatches.has(sender))
    .map((sender) => Number(sender.split('#')[1]))
    // The WAL stream's publishes are settled by confirming the slot: chaos.wal.ts accounts for them.
    .filter((batch) => batch < STREAM_BATCH_BASE)
    .sort((a, b) => a - b);
}

function wake(relay: RelayProcess, report: BatchReport): void {
  const ready = relay.waiters.filter((waiter) => waiter.kind === report.t);
  relay.waiters = relay.waiters.filter((waiter) => waiter.kind !== report.t);
  for (const waiter of ready) waiter.resolve(report);
}

/** The relay's next batch leaving ('sending') or answered by the broker ('sent': the relay settles it next). */
export function nextReport(relay: RelayProcess, kind: 'sending' | 'sent', timeoutMs: number): Promise<BatchReport | undefined> {
  return new Promise((resolve) => {
    const waiter = { kind, resolve: (report: BatchReport) => (clearTimeout(timer), resolve(report)) };
    const timer = setTimeout(() => {
      relay.waiters = relay.waiters.filter((candidate) => candidate !== waiter);
      resolve(undefined);
    }, timeoutMs);
    relay.waiters.push(waiter);
  });
}

export function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
