// What the chaos run's parts share: its log, the relay processes, the batches they sent, the counters
// of what was injected and what the relays reported, and which services are taken away right now.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { UnsettledReason } from './analysis';
import type { RelayReport } from './chaos.protocol';

export type BatchReport = Extract<RelayReport, { t: 'sending' | 'sent' }>;

export const REPO = join(__dirname, '..', '..', '..', '..');
/** How long an armed relay holds an acknowledged batch before settling it (see ChaosTransport.arm). */
export const HOLD_MS = 300;
export const started = Date.now();
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const seconds = (ms: number) => (ms / 1_000).toFixed(1);

export function log(line: string): void {
  const text = `[chaos +${seconds(Date.now() - started).padStart(6)}s] ${line}`;
  console.log(text);
  if (runState.timelineFile) appendFileSync(runState.timelineFile, `${text}\n`);
}

export interface RelayProcess {
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

/** What the run's parts share and change: where it logs, and which services it has taken away. */
export const runState = {
  dir: '',
  timelineFile: '',
  pidFile: '',
  brokerDown: false,
  postgresDown: false,
  stopping: false,
  /** WAL mode: the relay whose stream published last (the one holding the slot). */
  streamer: undefined as string | undefined,
};

export const children = new Set<ChildProcess>();
export const relays: RelayProcess[] = [];
export const unsettled = new Map<string, UnsettledReason>();
export const batchIds = new Map<string, string[]>();
/** When each batch (`relay#batch`) first left. */
export const batchSentAt = new Map<string, number>();
/** Batches (`relay#claim`) whose relay reported every outcome recorded. */
export const settledBatches = new Set<string>();
export const counters = {
  relayStarts: 0,
  kills: 0,
  killsOnSend: 0,
  /** WAL mode: kills of the relay that was streaming the slot. */
  streamerKills: 0,
  unexpectedExits: 0,
  stalls: 0,
  /** Stalls whose rows were read before and after SIGCONT, so that what the woken relay did could be compared. */
  stallsCompared: 0,
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
export const killedRelayIds: string[] = [];
/** Relay processes that ended without a kill of the run's: how, and where their log is. */
export const unexpectedExits: string[] = [];
/** What each relay said about its own batches (lease overruns, settle failures, late acks), for the stall report. */
export const relayIncidents = new Map<string, string[]>();
export const noteIncident = (relayId: string, text: string) => relayIncidents.set(relayId, [...(relayIncidents.get(relayId) ?? []), text]);
export const stallReports: string[] = [];
export const stallViolations: string[] = [];

export function remember(child: ChildProcess): void {
  children.add(child);
  if (runState.pidFile && child.pid) appendFileSync(runState.pidFile, `${child.pid}\n`);
  child.once('exit', () => children.delete(child));
}

/** Ends every child we started, by pid (stopped ones are continued first so that nothing lingers). */
export function killChildren(): void {
  for (const child of children) {
    try {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
}
