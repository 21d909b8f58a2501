import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { OutboxPublisher } from '../nest/outbox.publisher';
import { expectNotPublished, expectPublished } from './outbox-assertions';
import { InMemoryOutbox } from './in-memory-outbox';
import { OutboxTestingModule } from './outbox-testing.module';
import { RecordingOutboxTransport } from './recording-outbox.transport';

// A user's service, unchanged: it injects OutboxPublisher as in production.
@Injectable()
class InvoiceService {
  constructor(private readonly outbox: OutboxPublisher) {}

  issue(id: string, amountCents: number): Promise<string[]> {
    return this.outbox.add({ type: 'billing.invoice-issued', aggregateType: 'invoice', aggregateId: id, payload: { id, amountCents } });
  }
}

describe('OutboxTestingModule (a user unit test)', () => {
  async function setUp() {
    const module = await Test.createTestingModule({
      imports: [OutboxTestingModule.forRoot({ defaultTopic: 'billing' })],
      providers: [InvoiceService],
    }).compile();
    return { service: module.get(InvoiceService), outbox: module.get(InMemoryOutbox), transport: module.get(RecordingOutboxTransport) };
  }

  it('publishes what the service added once the relay runs, not before', async () => {
    const { service, outbox, transport } = await setUp();
    await service.issue('inv-1', 1250);
    expectNotPublished(transport, { type: 'billing.invoice-issued' });
    expect(await outbox.runRelayOnce()).toMatchObject({ claimed: 1, published: 1 });
    const message = expectPublished(transport, { type: 'billing.invoice-issued', aggregateId: 'inv-1', destination: 'billing', payload: { amountCents: 1250 } }, 1);
    expect(message.key).toBe('inv-1');
  });

  it('keeps a payload over maxPayloadBytes inline when the claim check is on, as a consumer gets it once fetched', async () => {
    const module = await Test.createTestingModule({ imports: [OutboxTestingModule.forRoot({ defaultTopic: 'docs', maxPayloadBytes: 1_024, claimCheck: { thresholdBytes: 512 } })] }).compile();
    const [outbox, transport] = [module.get(InMemoryOutbox), module.get(RecordingOutboxTransport)];
    const payload = { text: 'x'.repeat(5_000) };
    await module.get(OutboxPublisher).add({ type: 'docs.scanned', aggregateType: 'doc', aggregateId: 'd-1', payload });
    await outbox.drain();
    expectPublished(transport, { type: 'docs.scanned', payload }, 1);
  });

  it('retries after a refused publish, as the real relay does', async () => {
    const { service, outbox, transport } = await setUp();
    transport.failNext();
    await service.issue('inv-2', 10);
    expect(await outbox.runRelayOnce()).toMatchObject({ published: 0, retried: 1 });
    await outbox.drain();
    expectPublished(transport, { type: 'billing.invoice-issued', aggregateId: 'inv-2' }, 1);
  });

  it('explains a failed assertion by listing what was published', async () => {
    const { service, outbox, transport } = await setUp();
    await service.issue('inv-3', 1);
    await outbox.drain();
    expect(() => expectPublished(transport, { type: 'billing.invoice-voided' })).toThrow(/found 0\. Published:\n {2}billing\.invoice-issued inv-3 → billing/);
  });
});
