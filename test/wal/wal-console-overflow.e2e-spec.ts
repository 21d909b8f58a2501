import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { OutboxConsoleModule } from '@nest-outbox/outbox/console';
import { OutboxStats } from '@nest-outbox/outbox/observability';
import { KafkaTopicReader } from '../support/kafka-topic.reader';
import { requireService } from '../support/services';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';

/** Produces to the Kafka test broker, and refuses the keys in `refusing` (a partition without a leader, say). */
class KafkaWithRefusals implements OutboxTransport {
  readonly name = 'kafka-with-refusals';
  readonly refusing = new Set<string>();
  constructor(private readonly producer: Producer) {}
  async publish(message: OutgoingMessage): Promise<void> {
    if (this.refusing.has(message.key)) throw new Error(`no leader for the partition of ${message.key}`);
    await this.producer.send({ topic: message.destination, acks: -1, messages: [{ key: message.key, value: JSON.stringify(message.envelope), headers: message.headers }] });
  }
}

interface Listed {
  id: string;
  aggregateId: string;
  status: string;
  attempts: number;
  lastError: string | null;
}

// The console and stats over rows the stream moved to the table: retrying, then dead, then
// requeued from the console to the broker; the stats carry the slot's lag beside the counts.
describe('WAL delivery mode: the console and stats over messages the stream moved to the table', () => {
  const suffix = randomBytes(4).toString('hex');
  const topic = `wal-console-${suffix}`;
  let sandbox: WalSandbox;
  let reader: KafkaTopicReader;
  let producer: Producer;
  let app: WalApp;
  let transport: KafkaWithRefusals;
  let base: string;
  const api = async <T>(path: string, init?: RequestInit): Promise<T> => {
    const response = await fetch(`${base}api/${path}`, { ...init, headers: { 'content-type': 'application/json' } });
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const listed = async (query: string) => (await api<{ messages: Listed[] }>(`messages?${query}`)).messages;

  beforeAll(async () => {
    const brokers = requireService('kafka').split(',');
    sandbox = await walSandbox('wal_console');
    reader = new KafkaTopicReader(brokers, topic);
    await reader.start();
    producer = new Kafka({ clientId: `wal-console-${suffix}`, brokers, logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: true });
    await producer.connect();
    transport = new KafkaWithRefusals(producer);
    transport.refusing.add('stuck');
    app = await sandbox.start(
      {
        transport,
        resolveTopic: () => topic,
        pollIntervalMs: 100,
        maxAttempts: 3,
        // Wide enough that the row is seen retrying before its last attempt makes it dead.
        backoff: { initialMs: 1_500, maxMs: 1_500, jitter: 0 },
        stats: { refreshIntervalMs: 1 },
        wal: { slotName: sandbox.slotName, attemptsBeforeTable: 1 },
      },
      { imports: [OutboxConsoleModule.forRoot({ noAuth: true, refreshIntervalMs: 1_000 })], http: true },
    );
    base = `${await app.http!.getUrl()}/outbox/`;
  });

  afterAll(async () => {
    await sandbox?.drop();
    await reader?.stop();
    await producer?.disconnect();
  });

  it('lists the moved message retrying then dead, requeues it to the broker, and the stats carry the slot', async () => {
    const write = (aggregateId: string, label: string) =>
      app.dataSource.transaction((manager) => app.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId, payload: { label }, topic }));
    await write('stuck', 's1');
    await write('fine', 'f1');
    await waitFor('the other aggregate streamed to the broker', () => reader.forKey('fine').length === 1, 30_000);

    const [retrying] = await waitFor('the moved message listed as retrying', async () => {
      const found = await listed('retrying=true');
      return found.length === 1 ? found : undefined;
    });
    expect(retrying).toMatchObject({ aggregateId: 'stuck', status: 'pending' });
    expect(retrying.attempts).toBeGreaterThanOrEqual(1);
    expect(retrying.lastError).toContain('no leader for the partition of stuck');

    const [dead] = await waitFor('the moved message dead after maxAttempts', async () => {
      const found = await listed('status=dead');
      return found.length === 1 ? found : undefined;
    }, 30_000);
    expect(dead).toMatchObject({ id: retrying.id, attempts: 3 });
    const summary = await api<{ stats: { dead: number; pending: number; wal?: { slot: string; active: boolean; retainedBytes: number } } }>('summary?fresh=true');
    expect(summary.stats).toMatchObject({ dead: 1, pending: 0, wal: { slot: sandbox.slotName, active: true } });
    expect(reader.forKey('stuck')).toEqual([]);

    transport.refusing.clear();
    await api(`messages/${dead.id}/requeue`, { method: 'POST', body: '{}' });
    await waitFor('the requeued message on the broker', () => reader.forKey('stuck').length === 1, 30_000);
    expect(reader.forKey('stuck')[0].value).toMatchObject({ id: dead.id, aggregateId: 'stuck', payload: { label: 's1' } });
    const snapshot = await waitFor('the stats without the dead row', async () => {
      const read = await app.module.get(OutboxStats).snapshot({ fresh: true });
      return read.dead === 0 && read.pending === 0 ? read : undefined;
    });
    expect(snapshot.wal).toMatchObject({ slot: sandbox.slotName, active: true, retainedBytes: expect.any(Number) });
    // Nothing published twice: the stream confirmed what it moved, and the table sent it once.
    expect(reader.records.map((record) => record.key).sort()).toEqual(['fine', 'stuck']);
  });
});
