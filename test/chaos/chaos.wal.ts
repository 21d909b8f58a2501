// The WAL delivery mode's part of a chaos run (--delivery=wal): what PostgreSQL itself says was
// committed (an audit slot of its own), where each stream (re)started reading (the server log),
// and which duplicates those restarts explain.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OutboxRow, UnsettledReason } from './analysis';
import { withClient } from './chaos.database';
import { STREAM_BATCH_BASE, type ChaosWalWrite } from './chaos.protocol';

/** One event of the run as PostgreSQL decoded it from the WAL, in commit order. */
export interface CommittedEvent {
  id: string;
  aggregateId: string;
  type: string;
  /** End of its commit record: the position a relay confirms, and the one a restart replays after. */
  commitLsn: bigint;
}

/** A stream connection the server started for the run's slot: when, and after which commit it replayed. */
export interface StreamStart {
  at: number;
  after: bigint;
}

/** Slot and publication of the run, and the audit slot beside them. */
export interface WalRun {
  /** What the writer writes: the audit decodes rows' inserts (test_decoding) or the WAL messages (pgoutput). */
  write: ChaosWalWrite;
  slotName: string;
  auditSlot: string;
  prefix: string;
  /** The slot's confirmed position read just before each PostgreSQL stop, and once a second (`sampleConfirmed`). */
  confirmedBeforeRestart: Array<{ at: number; lsn: bigint }>;
  confirmedSamples: Array<{ at: number; lsn: bigint }>;
  /** When each PostgreSQL stop began. */
  restartsAt: number[];
}

export function walRun(runId: string, write: ChaosWalWrite): WalRun {
  const slotName = `chaos_${runId.replace(/[^0-9a-z]/gi, '_').toLowerCase()}`;
  return { write, slotName, auditSlot: `${slotName}_audit`, prefix: `nest-outbox:${slotName}`, confirmedBeforeRestart: [], confirmedSamples: [], restartsAt: [] };
}

export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/**
 * The server logs every replication start with the position it replays after (PostgreSQL 15 does
 * so with log_replication_commands), and the line prefix names the connection's application, so
 * the relays' streams (application_name nest-outbox-wal) are told apart from the audit's peeks.
 * The run's own server (scripts/chaos.sh starts it), so changing its settings is ours to do.
 */
export async function prepareServer(url: string): Promise<void> {
  await withClient(url, undefined, async (client) => {
    await client.query(`ALTER SYSTEM SET log_replication_commands = on`);
    await client.query(`ALTER SYSTEM SET log_line_prefix = '%m [%p] app=%a '`);
    await client.query(`SELECT pg_reload_conf()`);
  });
}

/**
 * A second slot, never read until the end: it keeps every transaction committed from now on, so
 * that the checks compare the topic with what PostgreSQL decoded, not with what the relays read.
 * Created once the relays have created the publication, before the writer starts.
 */
export async function createAuditSlot(url: string, run: WalRun): Promise<void> {
  const plugin = run.write === 'row' ? 'test_decoding' : 'pgoutput';
  await withClient(url, undefined, (client) => client.query(`SELECT pg_create_logical_replication_slot($1, $2)`, [run.auditSlot, plugin]));
}

/**
 * The run's events in commit order, decoded by the server from the audit slot (pgoutput, binary):
 * a message record is 'M', flags, its LSN (8 bytes), the prefix and a NUL, the length (4 bytes), the
 * content; the commit record 'C' that follows carries, in the `lsn` column, its end position.
 */
export async function committedEvents(url: string, run: WalRun): Promise<CommittedEvent[]> {
  if (run.write === 'row') return committedRows(url, run);
  const rows = await withClient(url, undefined, async (client) => {
    const { rows } = await client.query(
      `SELECT lsn::text AS lsn, chr(get_byte(data, 0)) AS tag,
              CASE WHEN get_byte(data, 0) = 77 AND substring(data FROM 11 FOR octet_length(p.prefix) + 1) = p.prefix || '\\x00'::bytea
                   THEN convert_from(substring(data FROM 11 + octet_length(p.prefix) + 5), 'UTF8') END AS content
         FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2, 'messages', 'true') WITH ORDINALITY AS c(lsn, xid, data, n),
              (SELECT convert_to($3, 'UTF8') AS prefix) AS p
        WHERE get_byte(data, 0) IN (67, 77)
        ORDER BY n`,
      [run.auditSlot, run.slotName, run.prefix],
    );
    return rows as Array<{ lsn: string; tag: string; content: string | null }>;
  });
  const events: CommittedEvent[] = [];
  let open: Array<Omit<CommittedEvent, 'commitLsn'>> = [];
  for (const row of rows) {
    if (row.tag === 'M' && row.content !== null) {
      const record = JSON.parse(row.content) as { messages: Array<{ id: string; aggregateId: string; type: string }> };
      open.push(...record.messages.map(({ id, aggregateId, type }) => ({ id, aggregateId, type })));
    } else if (row.tag === 'C') {
      events.push(...open.map((event) => ({ ...event, commitLsn: parseLsn(row.lsn) })));
      open = [];
    }
  }
  return events;
}

/**
 * With wal.write 'row': the run's events are the stream-owned rows' inserts, in commit order, as
 * test_decoding prints them (`table <schema>.outbox_messages: INSERT: position[bigint]:1
 * id[uuid]:'…' … lease_owner[character varying]:'nest-outbox:wal-stream' …`); a COMMIT line's
 * `lsn` is its record's end. Updates (the stream letting rows go) and delayed rows are not events of
 * the stream.
 */
async function committedRows(url: string, run: WalRun): Promise<CommittedEvent[]> {
  const rows = await withClient(url, undefined, async (client) => {
    const { rows } = await client.query(
      `SELECT lsn::text AS lsn, data FROM pg_logical_slot_peek_changes($1, NULL, NULL, 'include-xids', '0') WITH ORDINALITY AS c(lsn, xid, data, n)
        WHERE data = 'COMMIT' OR (data LIKE 'table %.outbox_messages: INSERT: %' AND data LIKE '%lease_owner[character varying]:''nest-outbox:wal-stream''%')
        ORDER BY n`,
      [run.auditSlot],
    );
    return rows as Array<{ lsn: string; data: string }>;
  });
  const column = (data: string, name: string, type: string) => new RegExp(`${name}\\[${type}\\]:'((?:[^']|'')*)'`).exec(data)?.[1].replace(/''/g, "'") ?? '';
  const events: CommittedEvent[] = [];
  let open: Array<Omit<CommittedEvent, 'commitLsn'>> = [];
  for (const row of rows) {
    if (row.data !== 'COMMIT') {
      open.push({ id: column(row.data, 'id', 'uuid'), aggregateId: column(row.data, 'aggregate_id', 'character varying'), type: column(row.data, 'event_type', 'character varying') });
    } else {
      events.push(...open.map((event) => ({ ...event, commitLsn: parseLsn(row.lsn) })));
      open = [];
    }
  }
  return events;
}

/** The events as the checks' rows: commit order is the position; a status from the table if the stream moved it there. */
export function eventRows(events: CommittedEvent[], table: OutboxRow[]): OutboxRow[] {
  const tableRows = new Map(table.map((row) => [row.id, row]));
  const rows: OutboxRow[] = events.map((event, index) => {
    const row = tableRows.get(event.id);
    tableRows.delete(event.id);
    return { position: String(index + 1), id: event.id, aggregateId: event.aggregateId, type: event.type, status: row?.status ?? 'published', attempts: row?.attempts ?? 0, lastError: row?.lastError ?? null, leaseOwner: row?.leaseOwner ?? null };
  });
  // A row the WAL never carried would be a ghost of the overflow: kept, so that the checks see it.
  return [...rows, ...[...tableRows.values()].map((row) => ({ ...row, position: String(events.length + Number(row.position)) }))];
}

export async function slotConfirmed(url: string, slotName: string): Promise<bigint | undefined> {
  return withClient(url, undefined, async (client) => {
    const { rows } = await client.query(`SELECT confirmed_flush_lsn::text AS lsn FROM pg_replication_slots WHERE slot_name = $1`, [slotName]);
    return rows[0]?.lsn ? parseLsn(rows[0].lsn) : undefined;
  });
}

/** Reads the slot's confirmed position once a second until `stopped()`; readings while the server is down are skipped. */
export async function sampleConfirmed(url: string, run: WalRun, stopped: () => boolean): Promise<void> {
  while (!stopped()) {
    const lsn = await slotConfirmed(url, run.slotName).catch(() => undefined);
    if (lsn !== undefined) run.confirmedSamples.push({ at: Date.now(), lsn });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

export async function currentLsn(url: string): Promise<bigint> {
  return withClient(url, undefined, async (client) => parseLsn((await client.query(`SELECT pg_current_wal_lsn()::text AS lsn`)).rows[0].lsn));
}

/** Every start of a relay's stream on the run's slot, from the server log, oldest first. */
export function streamStarts(servicesDir: string, run: WalRun): StreamStart[] {
  const lines = readFileSync(join(servicesDir, 'postgres', 'postgres.log'), 'utf8').split('\n');
  const starts: StreamStart[] = [];
  for (let index = 0; index < lines.length - 1; index++) {
    if (!lines[index].includes('app=nest-outbox-wal') || !lines[index].includes(`starting logical decoding for slot "${run.slotName}"`)) continue;
    const detail = /Streaming transactions committing after ([0-9A-F]+\/[0-9A-F]+)/.exec(lines[index + 1]);
    const at = Date.parse(lines[index].slice(0, 23).replace(' ', 'T') + 'Z');
    if (detail) starts.push({ at, after: parseLsn(detail[1]) });
  }
  return starts;
}

export async function dropSlots(url: string, run: WalRun): Promise<void> {
  await withClient(url, undefined, async (client) => {
    await client.query(`SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = ANY($1) AND NOT active`, [[run.slotName, run.auditSlot]]);
    await client.query(`DROP PUBLICATION IF EXISTS ${run.slotName}`);
  });
}

export interface ReplayInput {
  events: CommittedEvent[];
  starts: StreamStart[];
  /** Event id → the batches (`relay#batch`) whose copies reached the topic; and when each batch first left. */
  deliveredBy: ReadonlyMap<string, string[]>;
  sentAt: ReadonlyMap<string, number>;
  batchSize: number;
  /** Batches the stream publishes at once (the module's maxBatchesInFlight). */
  maxBatchesInFlight: number;
  /** The slot's confirmed position as read during the run (before each PostgreSQL stop, and once a second). */
  confirmed: WalRun['confirmedSamples'];
  /** When PostgreSQL was stopped for each restart. */
  restartsAt: number[];
  /** Events the stream moved to the table. */
  diverted: ReadonlySet<string>;
  unsettled: Map<string, UnsettledReason>;
}

export interface ReplayAccount {
  /** What the stream's restarts may repeat, summed: the duplicate bound's stream part. */
  allowance: number;
  figures: Array<[string, string | number]>;
  /** Restarts that repeated more than their allowance. */
  exceeded: string[];
  restarts: number;
}

/** Batches the WAL host decodes ahead of the one in flight (BATCHES_AHEAD in outbox-wal.host.ts). */
const BATCHES_AHEAD = 4;

/**
 * A stream that starts again replays every commit after the later of the slot's confirmed position
 * and the position the stream saved in its table. The relay confirms a commit (and saves its
 * position, one write in flight at most) once the broker acknowledged all of its messages (or they
 * were moved to the table) and everything before it. What it had handled and not confirmed when its
 * stream ended is at most the batches in flight (maxBatchesInFlight, the rest of a commit the batch
 * before them split among them), and, when it learns of the end only later (the server closed the
 * connection while the relay was busy publishing), the batches it had decoded ahead:
 * (BATCHES_AHEAD + maxBatchesInFlight) × batchSize in all. That is
 * the bound of every start, after a PostgreSQL restart too: PostgreSQL 15 writes a logical slot's
 * confirmed position to disk only when the slot also moves its restart point, so the slot alone
 * would replay from an older position (the server log names that one); the saved position skips
 * that stretch, which is measured and reported (the slot's confirmed position read once a second
 * and just before each stop, against the position the server log names).
 *
 * The events a start replayed are those sent before it (or by another instance's stream, or moved
 * to the table) that its own stream sent again after it; each of their earlier copies' batches is
 * marked unsettled ('replay'): those copies are the replay's.
 */
export function accountReplays(input: ReplayInput): ReplayAccount {
  const commitOf = new Map(input.events.map((event) => [event.id, event.commitLsn]));
  const isStream = (sender: string) => Number(sender.split('#')[1]) >= STREAM_BATCH_BASE;
  const relayOf = (sender: string) => sender.split('#')[0];
  const sentAt = (sender: string) => input.sentAt.get(sender) ?? Infinity;
  const streamSenders = [...input.sentAt.keys()].filter(isStream).sort((a, b) => sentAt(a) - sentAt(b));
  let allowance = 0;
  let worst = 0;
  let gaps = 0;
  const exceeded: string[] = [];
  input.starts.slice(1).forEach((start, index) => {
    // The instance streaming from this start: the first to publish from the stream after it.
    const streamer = relayOf(streamSenders.find((sender) => sentAt(sender) >= start.at) ?? '#');
    const ownAfter = (sender: string) => isStream(sender) && relayOf(sender) === streamer && sentAt(sender) >= start.at;
    // Until the next start, only the old stream can publish from the stream besides this one: what it
    // had decoded before it learnt that its connection had ended.
    const nextAt = input.starts[index + 2]?.at ?? Infinity;
    const oldStream = (sender: string) => isStream(sender) && relayOf(sender) !== streamer && sentAt(sender) >= start.at && sentAt(sender) < nextAt;
    const handledBefore = (sender: string) => sentAt(sender) < start.at || oldStream(sender);
    let replayed = 0;
    for (const [id, senders] of input.deliveredBy) {
      if ((commitOf.get(id) ?? 0n) <= start.after) continue;
      const earlier = senders.filter((sender) => !ownAfter(sender) && (handledBefore(sender) || (!isStream(sender) && input.diverted.has(id))));
      if (earlier.length === 0) continue;
      if (senders.some(handledBefore) && senders.some(ownAfter)) replayed += 1;
      const again = senders.filter((sender) => sentAt(sender) >= start.at);
      if (again.length === 0 || senders.length < 2) continue;
      const kept = again.find(ownAfter) ?? again[again.length - 1];
      for (const sender of senders) if (sender !== kept && !input.unsettled.has(sender)) input.unsettled.set(sender, 'replay');
    }
    // The highest position known confirmed before this start: the earlier starts', and, once
    // PostgreSQL has restarted, what it had confirmed before (the readings). Without a restart
    // the server keeps its confirmed position in memory: a start replaying from before a reading
    // then has no allowance for it, and fails the check.
    const restarted = input.restartsAt.some((at) => at < start.at);
    const readings = restarted ? input.confirmed.filter((reading) => reading.at < start.at).map((reading) => reading.lsn) : [];
    const confirmedBefore = [...input.starts.slice(0, index + 1).map((s) => s.after), ...readings];
    const highest = confirmedBefore.reduce((a, b) => (a > b ? a : b), start.after);
    const gap = input.events.filter((event) => event.commitLsn > start.after && event.commitLsn <= highest).length;
    gaps = Math.max(gaps, gap);
    const allowed = (BATCHES_AHEAD + input.maxBatchesInFlight) * input.batchSize;
    allowance += allowed;
    worst = Math.max(worst, replayed);
    if (replayed > allowed) exceeded.push(`stream start at ${new Date(start.at).toISOString()} replayed ${replayed} events sent before it (allowed ${allowed})`);
  });
  return {
    allowance,
    exceeded,
    restarts: Math.max(0, input.starts.length - 1),
    figures: [
      ['stream starts on the slot (server log) / restarts', `${input.starts.length} / ${Math.max(0, input.starts.length - 1)}`],
      [`most events one stream start sent again that had been handled before it (≤ ${BATCHES_AHEAD + input.maxBatchesInFlight} × batchSize = ${(BATCHES_AHEAD + input.maxBatchesInFlight) * input.batchSize})`, worst],
      ['events confirmed before a PostgreSQL stop that the slot had not persisted (skipped by the saved position)', gaps],
    ],
  };
}
