// The chaos run's verdict comes from analyse(); each check is shown here to fail on a made-up
// history that breaks its promise, and to pass on one that keeps it. The CHAOS_SELF_TEST modes
// that corrupt the ledger (drop, ghost, reorder, dup) run here too, so CI sees them fail without a
// chaos run; 'inbox' bypasses the inbox consumer against PostgreSQL and needs a real run.
import { analyse, MIN_AGGREGATES_WITH_SEVERAL_EVENTS, MIN_COMMITTED_EVENTS, stallFinding, type Analysis, type AnalysisInput, type OutboxRow, type UnsettledReason } from './analysis';
import { EVENT_TYPE, type WriterOp, type WriterRecord } from './chaos.protocol';
import type { Delivery } from './ledger';

const PARTITIONS = 4;
const BATCH_SIZE = 10;

/** A run that kept every promise: `orders` orders, each placed, and paid when `paid(n)`; each event delivered once, in order. */
function history(orders: number, paid: (order: number) => boolean = (order) => order % 2 === 0): AnalysisInput {
  const rows: OutboxRow[] = [];
  const writer: WriterRecord[] = [];
  const event = (order: number, op: WriterOp) => {
    const position = rows.length + 1;
    rows.push({ position: String(position), id: `event-${position}`, aggregateId: `order-${order}`, type: EVENT_TYPE[op], status: 'published', attempts: 1, lastError: null, leaseOwner: null });
    writer.push({ seq: position, orderId: `order-${order}`, op, outcome: 'committed', at: position });
  };
  for (let order = 0; order < orders; order++) event(order, 'place');
  for (let order = 0; order < orders; order++) if (paid(order)) event(order, 'pay');
  const offsets = new Array<number>(PARTITIONS).fill(0);
  const deliveries = rows.map((row, index): Delivery => {
    const partition = Number(row.aggregateId.split('-')[1]) % PARTITIONS;
    return { partition, offset: String(offsets[partition]++), id: row.id, key: row.aggregateId, type: row.type, relay: 'relay-1', batch: String(Math.floor(index / BATCH_SIZE)), consumedAt: index };
  });
  return { rows, deliveries, writer, batchSize: BATCH_SIZE, maxBatchesInFlight: 2, unsettled: new Map(), kills: 0, stalls: 0, relaysAtBrokerOutages: 0, selfTest: [] };
}

/** A default-sized run: enough events and orders with several events for the minimums. */
const healthy = () => history(MIN_COMMITTED_EVENTS);
const broken = (analysis: Analysis) => analysis.findings.filter((finding) => !finding.ok).map((finding) => finding.check);

/** `count` more copies of distinct delivered events, sent by `relay` batch 0, at offsets after everything else. */
function copiesFrom(input: AnalysisInput, relay: string, count: number): Delivery[] {
  return input.deliveries.slice(0, count).map((delivery, index) => ({ ...delivery, relay, batch: '0', offset: String(1_000_000 + index) }));
}

describe('chaos analysis: each promise fails on a history that breaks it', () => {
  it('passes a history that keeps every promise', () => {
    expect(broken(analyse(healthy()))).toEqual([]);
  });

  it('fails a run with too few committed events, or too few orders with several events, to judge by', () => {
    expect(broken(analyse(history(40)))).toEqual([expect.stringContaining('enough committed events'), expect.stringContaining('orders with ≥ 2 events')]);
    const singleEvents = history(MIN_COMMITTED_EVENTS, (order) => order < MIN_AGGREGATES_WITH_SEVERAL_EVENTS - 1);
    expect(broken(analyse(singleEvents))).toEqual([expect.stringContaining('orders with ≥ 2 events')]);
  });

  it('fails on a lost event', () => {
    const input = healthy();
    input.deliveries = input.deliveries.filter((delivery) => delivery.id !== 'event-17');
    expect(broken(analyse(input))).toEqual(['committed events delivered']);
  });

  it('fails on a ghost: a delivered event that no transaction committed', () => {
    const input = healthy();
    input.deliveries.push({ ...input.deliveries[0], id: 'never-committed', offset: '999999' });
    expect(broken(analyse(input))).toEqual(['ghost events (delivered, not in the database)']);
  });

  it('fails on an event delivered before an earlier one of its order', () => {
    const input = healthy();
    // order-0's placement (event-1) and payment: the payment gets the placement's offset and the other way round.
    const [placed, paid] = input.deliveries.filter((delivery) => delivery.key === 'order-0');
    input.deliveries = input.deliveries.map((d) => (d === placed ? { ...d, offset: paid.offset } : d === paid ? { ...d, offset: placed.offset } : d));
    expect(broken(analyse(input))).toEqual(['per-aggregate order violations']);
  });

  it('fails on an order whose events went to two partitions', () => {
    const input = healthy();
    const paid = input.deliveries.find((delivery) => delivery.key === 'order-0' && delivery.type === EVENT_TYPE.pay)!;
    paid.partition = 1;
    paid.offset = '999999';
    expect(broken(analyse(input))).toEqual(['aggregates split across partitions']);
  });

  it('fails on a duplicate that no kill, stall or unsettled batch explains', () => {
    const input = healthy();
    input.deliveries.push(...copiesFrom(input, 'relay-2', 1));
    expect(broken(analyse(input))).toEqual(['duplicates within the bound', 'duplicates not explained by a kill, stall or unsettled batch']);
  });

  it('allows duplicates of a killed relay up to batchSize × batches in flight per kill, and fails one beyond', () => {
    const bound = BATCH_SIZE * 2;
    const run = (copies: number) => {
      const input = healthy();
      input.kills = 1;
      input.unsettled = new Map<string, UnsettledReason>([['relay-2#0', 'kill']]);
      input.deliveries.push(...copiesFrom(input, 'relay-2', copies));
      return analyse(input);
    };
    expect(broken(run(bound))).toEqual([]);
    expect(broken(run(bound + 1))).toEqual(['duplicates within the bound']);
  });

  it('fails on a row of a rolled-back transaction, and on a commit without its row', () => {
    const rolledBack = healthy();
    rolledBack.writer[0] = { ...rolledBack.writer[0], outcome: 'rolled-back' };
    expect(broken(analyse(rolledBack))).toEqual(['rows written by rolled-back or failed transactions']);
    const rowLost = healthy();
    rowLost.writer.push({ seq: 99_999, orderId: 'order-1', op: 'cancel', outcome: 'committed', at: 0 });
    expect(broken(analyse(rowLost))).toEqual(['committed transactions without their outbox row']);
  });

  it('fails on rows left pending after the drain', () => {
    const input = healthy();
    input.rows[3] = { ...input.rows[3], status: 'pending' };
    expect(broken(analyse(input))).toEqual(['rows left pending or dead after the drain']);
  });

  it('fails a stall whose relay changed rows others had taken over, and says "not checked" when no stall was compared', () => {
    expect(stallFinding(3, 2, ['stalled relay r1 batch 4: row 12 was published …'])).toMatchObject({ ok: false });
    expect(stallFinding(3, 2, [])).toEqual({ check: expect.any(String), ok: true, detail: expect.stringContaining('2 of 3 stalls compared') });
    expect(stallFinding(3, 0, [])).toMatchObject({ ok: true, notChecked: true, detail: expect.stringContaining('0 of 3 stalls compared') });
  });
});

describe('chaos self tests (CHAOS_SELF_TEST): each corruption of the ledger fails the run', () => {
  it.each([
    ['drop', ['committed events delivered']],
    ['ghost', ['ghost events (delivered, not in the database)']],
    ['reorder', ['per-aggregate order violations']],
    ['dup', ['duplicates within the bound', 'duplicates not explained by a kill, stall or unsettled batch']],
  ])('%s', (mode, checks) => {
    expect(broken(analyse({ ...healthy(), selfTest: [mode] }))).toEqual(checks);
  });
});
