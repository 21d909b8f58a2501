import { Registry } from 'prom-client';
import { OutboxWalHealthIndicator } from '@nest-outbox/outbox/observability';
import { RecordingOutboxTransport } from '@nest-outbox/outbox/testing';
import { waitFor } from '../support/wait-for';
import { walSandbox, type WalSandbox } from '../support/wal.harness';

describe('WAL delivery mode: the slot in health and metrics', () => {
  let sandbox: WalSandbox;
  beforeAll(async () => (sandbox = await walSandbox('wal_observe')));
  afterAll(() => sandbox?.drop());

  it('is up with the slot streamed, and down naming the reason when nobody streams it and it retains more than wal.maxRetainedBytes', async () => {
    const streamingRegistry = new Registry();
    const streaming = await sandbox.start({ transport: new RecordingOutboxTransport(), metrics: { registry: streamingRegistry }, stats: { refreshIntervalMs: 1 } });
    const health = streaming.module.get(OutboxWalHealthIndicator);
    const up = await waitFor('the slot streamed', async () => {
      const result = await health.isHealthy();
      return result['outbox-wal'].status === 'up' && result['outbox-wal'].streamed === true ? result : undefined;
    });
    expect(up['outbox-wal']).toMatchObject({ status: 'up', slot: sandbox.slotName });
    const streamedText = await streamingRegistry.metrics();
    expect(streamedText).toContain(`outbox_wal_slot_active{outbox="default",slot="${sandbox.slotName}"} 1`);
    expect(streamedText).toMatch(new RegExp(`outbox_wal_slot_retained_bytes\\{outbox="default",slot="${sandbox.slotName}"\\} \\d+`));
    await streaming.close();
    expect(await streamingRegistry.metrics()).not.toContain('outbox_wal_slot_active');

    const writerRegistry = new Registry();
    const writer = await sandbox.start({ relay: false, metrics: { registry: writerRegistry }, stats: { refreshIntervalMs: 1 }, wal: { slotName: sandbox.slotName, maxRetainedBytes: 1 } });
    await writer.dataSource.transaction((manager) =>
      writer.publisher.add(manager, { type: 'parcel.noted', aggregateType: 'parcel', aggregateId: 'waiting', payload: { label: 'x'.repeat(200) }, topic: 'parcels' }),
    );
    const down = await waitFor('the slot reported as not streamed', async () => {
      const result = await writer.module.get(OutboxWalHealthIndicator).isHealthy();
      return result['outbox-wal'].status === 'down' && result['outbox-wal'].streamed === false ? result['outbox-wal'] : undefined;
    });
    expect(down.reason).toContain(`no instance streams the replication slot "${sandbox.slotName}"`);
    expect(down.reason).toContain('over wal.maxRetainedBytes (1)');
    expect(down.retainedBytes).toBeGreaterThan(200);
    expect(await writerRegistry.metrics()).toContain(`outbox_wal_slot_active{outbox="default",slot="${sandbox.slotName}"} 0`);
  });
});
