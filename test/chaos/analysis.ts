import { createHash, randomUUID } from 'node:crypto';
import { EVENT_TYPE, type WriterRecord } from './chaos.protocol';
import type { Delivery } from './ledger';

export interface OutboxRow {
  position: string;
  id: string;
  aggregateId: string;
  type: string;
  status: string;
  attempts: number;
  lastError: string | null;
  leaseOwner: string | null;
}

/** Why a batch may have been sent without being settled as published (so its rows may be sent again). */
export type UnsettledReason = 'kill' | 'stall' | 'late-ack' | 'send-failed' | 'settle-failed' | 'lease-overrun' | 'replay';

export interface AnalysisInput {
  rows: OutboxRow[];
  deliveries: Delivery[];
  writer: WriterRecord[];
  batchSize: number;
  /** Batches a relay may hold unsettled at once: a kill, a stall or a lost produce reply may leave each of them unsettled. */
  maxBatchesInFlight: number;
  /** relay#batch → the reason that batch may be unsettled. */
  unsettled: Map<string, UnsettledReason>;
  kills: number;
  stalls: number;
  /** Relays running when the broker went down, summed over outages: each may lose the reply to one produce request. */
  relaysAtBrokerOutages: number;
  /** WAL mode: what the stream's restarts may repeat (chaos.wal.ts, accountReplays); 0 in the table mode. */
  streamReplayAllowance?: number;
  selfTest: string[];
}

export interface Finding {
  check: string;
  ok: boolean;
  detail: string;
  /** Nothing was there to compare (e.g. every stalled relay was idle): shown as such, never as "ok". */
  notChecked?: boolean;
}

/**
 * A run too small to judge by fails: with few events, or few orders with more than one event, the
 * loss, duplicate and order checks pass because there was little to break. A default run (140 s of
 * 40 operations/s, some rolled back or failed on purpose) committed 2,602 events, 903 orders of them
 * with two or more (2026-11-29), so the minimums leave room for a slower machine.
 */
export const MIN_COMMITTED_EVENTS = 1_000;
export const MIN_AGGREGATES_WITH_SEVERAL_EVENTS = 100;

export interface Analysis {
  figures: Array<[string, string | number]>;
  findings: Finding[];
  evidence: string[];
  duplicatesByCause: Record<string, number>;
}

const key = (relay: string, batch: string) => `${relay}#${batch}`;

/** The self tests corrupt the ledger on purpose, to show that each check can fail. */
export function applySelfTest(deliveries: Delivery[], input: AnalysisInput): Delivery[] {
  const modes = input.selfTest;
  let result = deliveries;
  if (modes.includes('drop')) {
    // Forget every copy of about 2% of the messages, as if the broker had lost them.
    result = result.filter((delivery) => createHash('sha1').update(delivery.id).digest()[0] > 5);
  }
  if (modes.includes('reorder')) {
    // Swap the first two events of one order, as if the second had overtaken the first.
    const byAggregate = new Map<string, Delivery[]>();
    for (const delivery of result) byAggregate.set(delivery.key, [...(byAggregate.get(delivery.key) ?? []), delivery]);
    const victim = [...byAggregate.values()].find((list) => new Set(list.map((d) => d.id)).size >= 2);
    if (victim) {
      const [first] = victim;
      const second = victim.find((d) => d.id !== first.id)!;
      result = result.map((d) => (d === first ? { ...d, offset: second.offset } : d === second ? { ...d, offset: first.offset } : d));
    }
  }
  if (modes.includes('ghost') && result.length > 0) {
    // An event nobody committed.
    result = [...result, { ...result[0], key: randomUUID(), offset: '999999999', id: randomUUID() }];
  }
  if (modes.includes('dup') && result.length > 0) {
    // More copies than any bound allows, sent by nobody the run knows of.
    const count = input.batchSize * (input.maxBatchesInFlight * (input.kills + input.stalls + input.relaysAtBrokerOutages) + input.unsettled.size) + (input.streamReplayAllowance ?? 0) + 1;
    const extra = Array.from({ length: count }, (_, index) => ({ ...result[index % result.length], offset: String(1_000_000_000 + index), relay: 'self-test', batch: String(index) }));
    result = [...result, ...extra];
  }
  return result;
}

function compareOffsets(a: Delivery, b: Delivery): number {
  return a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset));
}

export function analyse(input: AnalysisInput): Analysis {
  const { rows, batchSize, unsettled } = input;
  const deliveries = applySelfTest(input.deliveries, input).sort(compareOffsets);
  const evidence: string[] = [];
  const findings: Finding[] = [];
  const byId = new Map(rows.map((row) => [row.id, row]));

  // --- delivered vs committed ---------------------------------------------------------------
  const copies = new Map<string, Delivery[]>();
  for (const delivery of deliveries) copies.set(delivery.id, [...(copies.get(delivery.id) ?? []), delivery]);
  const missing = rows.filter((row) => !copies.has(row.id));
  const ghosts = [...copies.keys()].filter((id) => !byId.has(id));
  for (const row of missing.slice(0, 10)) {
    evidence.push(`missing: row ${row.position} id ${row.id} (${row.type} of order ${row.aggregateId}) status ${row.status}, attempts ${row.attempts}, lease ${row.leaseOwner ?? '-'}, last error ${row.lastError ?? '-'}`);
  }
  for (const id of ghosts.slice(0, 10)) {
    const [first] = copies.get(id)!;
    evidence.push(`ghost: id ${id} (${first.type} of order ${first.key}) at ${first.partition}:${first.offset}, sent by ${first.relay} batch ${first.batch}`);
  }

  // --- duplicates, each charged to the batch that was sent but not settled -------------------
  let duplicates = 0;
  let sameSendCopies = 0;
  let unexplained = 0;
  const duplicatesByCause: Record<string, number> = {};
  const chargedBatches = new Map<string, number>();
  for (const [id, list] of copies) {
    if (list.length < 2) continue;
    duplicates += list.length - 1;
    const senders = new Map<string, number>();
    for (const delivery of list) senders.set(key(delivery.relay, delivery.batch), (senders.get(key(delivery.relay, delivery.batch)) ?? 0) + 1);
    sameSendCopies += list.length - senders.size;
    if (list.length > senders.size) duplicatesByCause['produce retry (same send)'] = (duplicatesByCause['produce retry (same send)'] ?? 0) + list.length - senders.size;
    // Of k sends of one row, at most one can have been settled as published: k-1 need a reason.
    const needed = senders.size - 1;
    const explained = [...senders.keys()].filter((sender) => unsettled.has(sender));
    const charged = explained.slice(0, needed);
    for (const sender of charged) {
      const cause = unsettled.get(sender)!;
      duplicatesByCause[cause] = (duplicatesByCause[cause] ?? 0) + 1;
      chargedBatches.set(sender, (chargedBatches.get(sender) ?? 0) + 1);
    }
    if (charged.length < needed) {
      unexplained += needed - charged.length;
      if (evidence.filter((line) => line.startsWith('unexplained')).length < 10) {
        const row = byId.get(id);
        evidence.push(
          `unexplained duplicate: id ${id} (row ${row?.position ?? '?'}, ${row?.type ?? '?'}) sent by ${[...senders.keys()].join(', ')}; ` +
            `none of these batches but ${explained.length} was killed, stalled or reported unsettled`,
        );
      }
    }
  }
  const sendersSeen = new Set(deliveries.map((d) => key(d.relay, d.batch)));
  const failedDelivered = [...unsettled].filter(([sender, reason]) => reason === 'send-failed' && sendersSeen.has(sender)).length;
  const selfReported = [...unsettled.values()].filter((reason) => reason !== 'kill' && reason !== 'stall' && reason !== 'send-failed' && reason !== 'replay').length;
  const inFlight = input.maxBatchesInFlight;
  const replays = input.streamReplayAllowance ?? 0;
  const bound = batchSize * (inFlight * (input.kills + input.stalls + input.relaysAtBrokerOutages) + selfReported + failedDelivered) + replays;
  const worstBatch = Math.max(0, ...chargedBatches.values());

  // --- per-aggregate order ---------------------------------------------------------------------
  const perAggregate = new Map<string, Delivery[]>();
  for (const delivery of deliveries) perAggregate.set(delivery.key, [...(perAggregate.get(delivery.key) ?? []), delivery]);
  let orderViolations = 0;
  let splitAggregates = 0;
  let lateCopies = 0;
  for (const [aggregateId, list] of perAggregate) {
    if (new Set(list.map((d) => d.partition)).size > 1) splitAggregates += 1;
    const seen = new Set<string>();
    let highest = -1n;
    let highestDelivery: Delivery | undefined;
    for (const delivery of list) {
      const row = byId.get(delivery.id);
      if (row && seen.has(delivery.id) && BigInt(row.position) < highest) lateCopies += 1;
      if (!row || seen.has(delivery.id)) continue;
      seen.add(delivery.id);
      const position = BigInt(row.position);
      if (position < highest) {
        orderViolations += 1;
        if (evidence.filter((line) => line.startsWith('order')).length < 10) {
          evidence.push(
            `order violation: order ${aggregateId}: row ${row.position} (${row.type}) first delivered at ${delivery.partition}:${delivery.offset} by ${delivery.relay} batch ${delivery.batch}, ` +
              `after row ${highestDelivery ? byId.get(highestDelivery.id)?.position : '?'} at ${highestDelivery?.partition}:${highestDelivery?.offset} by ${highestDelivery?.relay} batch ${highestDelivery?.batch}`,
          );
        }
      } else {
        highest = position;
        highestDelivery = delivery;
      }
    }
  }

  // --- the writer's transactions against the outbox rows -----------------------------------------
  const rowCount = new Map<string, number>();
  for (const row of rows) rowCount.set(`${row.aggregateId}|${row.type}`, (rowCount.get(`${row.aggregateId}|${row.type}`) ?? 0) + 1);
  const committed = new Map<string, number>();
  const maybe = new Map<string, number>();
  const rolledBackPlacements = new Set<string>();
  const committedPlacements = new Set<string>();
  for (const record of input.writer) {
    const slot = `${record.orderId}|${EVENT_TYPE[record.op]}`;
    if (record.outcome === 'committed') committed.set(slot, (committed.get(slot) ?? 0) + 1);
    if (record.outcome === 'uncertain') maybe.set(slot, (maybe.get(slot) ?? 0) + 1);
    if (record.op === 'place' && (record.outcome === 'rolled-back' || record.outcome === 'failed')) rolledBackPlacements.add(record.orderId);
    if (record.op === 'place' && record.outcome !== 'rolled-back' && record.outcome !== 'failed') committedPlacements.add(record.orderId);
  }
  let rowsOfRolledBack = 0;
  let committedWithoutRow = 0;
  let rowsWithoutTransaction = 0;
  for (const [slot, count] of rowCount) {
    const [aggregateId] = slot.split('|');
    const allowed = (committed.get(slot) ?? 0) + (maybe.get(slot) ?? 0);
    if (count > allowed) {
      if (rolledBackPlacements.has(aggregateId) && !committedPlacements.has(aggregateId)) rowsOfRolledBack += count;
      else rowsWithoutTransaction += count - allowed;
      if (evidence.filter((line) => line.startsWith('row without')).length < 10) evidence.push(`row without a committed transaction: ${slot} has ${count} row(s), the writer committed ${committed.get(slot) ?? 0} (+${maybe.get(slot) ?? 0} uncertain)`);
    }
  }
  for (const [slot, count] of committed) {
    if ((rowCount.get(slot) ?? 0) < count) {
      committedWithoutRow += count - (rowCount.get(slot) ?? 0);
      if (evidence.filter((line) => line.startsWith('committed without')).length < 10) evidence.push(`committed without a row: ${slot}: committed ${count}, rows ${rowCount.get(slot) ?? 0}`);
    }
  }
  const rolledBack = input.writer.filter((record) => record.outcome === 'rolled-back').length;

  const eventsPerAggregate = new Map<string, number>();
  for (const row of rows) eventsPerAggregate.set(row.aggregateId, (eventsPerAggregate.get(row.aggregateId) ?? 0) + 1);
  const aggregatesWithSeveral = [...eventsPerAggregate.values()].filter((count) => count >= 2).length;

  const pending = rows.filter((row) => row.status === 'pending').length;
  const dead = rows.filter((row) => row.status === 'dead').length;
  const distinctDelivered = [...copies.keys()].filter((id) => byId.has(id)).length;

  findings.push(
    { check: `enough committed events to judge by (≥ ${MIN_COMMITTED_EVENTS})`, ok: rows.length >= MIN_COMMITTED_EVENTS, detail: String(rows.length) },
    { check: `orders with ≥ 2 events, whose order is checked (≥ ${MIN_AGGREGATES_WITH_SEVERAL_EVENTS})`, ok: aggregatesWithSeveral >= MIN_AGGREGATES_WITH_SEVERAL_EVENTS, detail: String(aggregatesWithSeveral) },
    { check: 'committed events delivered', ok: missing.length === 0, detail: `${distinctDelivered} of ${rows.length} (missing ${missing.length})` },
    { check: 'ghost events (delivered, not in the database)', ok: ghosts.length === 0, detail: String(ghosts.length) },
    { check: 'rows written by rolled-back or failed transactions', ok: rowsOfRolledBack + rowsWithoutTransaction === 0, detail: `${rowsOfRolledBack + rowsWithoutTransaction} (of ${rolledBack} deliberate rollbacks)` },
    { check: 'committed transactions without their outbox row', ok: committedWithoutRow === 0, detail: String(committedWithoutRow) },
    { check: 'per-aggregate order violations', ok: orderViolations === 0, detail: String(orderViolations) },
    { check: 'aggregates split across partitions', ok: splitAggregates === 0, detail: String(splitAggregates) },
    { check: `duplicates within the bound`, ok: duplicates <= bound, detail: `${duplicates} ≤ ${bound}` },
    { check: 'duplicates not explained by a kill, stall or unsettled batch', ok: unexplained === 0, detail: String(unexplained) },
    { check: 'rows left pending or dead after the drain', ok: pending + dead === 0, detail: `${pending} pending, ${dead} dead` },
  );

  const figures: Array<[string, string | number]> = [
    ['committed events (outbox rows)', rows.length],
    ['orders touched / aggregates delivered', `${new Set(rows.map((row) => row.aggregateId)).size} / ${perAggregate.size}`],
    ['records on the topic', deliveries.length],
    ['distinct committed events delivered', distinctDelivered],
    ['missing', missing.length],
    ['ghosts', ghosts.length],
    ['duplicates (extra copies)', duplicates],
    ['  of which produce retries inside one send', sameSendCopies],
    [
      'duplicate bound',
      `${bound} = batchSize ${batchSize} × (${inFlight} batches in flight × (${input.kills} kills + ${input.stalls} stalls + ${input.relaysAtBrokerOutages} relays at broker outages) + ` +
        `${selfReported} self-reported unsettled batches + ${failedDelivered} failed-but-delivered sends)` +
        (input.streamReplayAllowance === undefined ? '' : ` + ${replays} the WAL stream's restarts may replay`),
    ],
    ['most duplicates charged to one batch (≤ batchSize)', worstBatch],
    ['unexplained duplicates', unexplained],
    ['per-aggregate order violations (first deliveries out of position order)', orderViolations],
    ['  copies of event N arriving again after event N+1 (allowed: consumers dedupe by id)', lateCopies],
    ['rows of rolled-back transactions', rowsOfRolledBack + rowsWithoutTransaction],
    ['dead / pending rows at the end', `${dead} / ${pending}`],
  ];
  return { figures, findings, evidence, duplicatesByCause };
}

/**
 * Whether a relay woken from a stall left alone the rows that others had taken over meanwhile. A
 * stall is compared only when its relay held rows and the database could be read around SIGCONT;
 * when none was, the promise was not checked, and the report says so.
 */
export function stallFinding(stalls: number, compared: number, violations: string[]): Finding {
  const check = 'stalled relay left rows taken over by others alone';
  if (violations.length > 0) return { check, ok: false, detail: `${violations.length} rows changed` };
  const detail = `${compared} of ${stalls} stalls compared (the others: relay idle or database unavailable)`;
  return compared === 0 ? { check, ok: true, notChecked: true, detail } : { check, ok: true, detail };
}
