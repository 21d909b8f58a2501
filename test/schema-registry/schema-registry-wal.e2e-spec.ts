import { MockClient } from '@confluentinc/schemaregistry';
import { ConfluentKafkaTransport } from '@nest-outbox/outbox/kafka';
import { requireService } from '../support/services';
import { walSandbox, type WalApp, type WalSandbox } from '../support/wal.harness';
import { expectWireFormatRoundTrip, ordersTopic, paymentsTopic, RawConsumer, suffix } from './schema-registry.fixtures';

/**
 * The same round trip in the WAL delivery mode, with each of its writes: the stream hands its
 * messages to the same transport, which encodes them in the Confluent wire format.
 */
describe.each(['row', 'message'] as const)("Schema Registry serializers in the WAL mode, wal.write '%s' (ConfluentKafkaTransport)", (write) => {
  const brokers = requireService('kafka').split(',');
  const registry = new MockClient({ baseURLs: ['mock://'] });
  const raw = new RawConsumer();
  let sandbox: WalSandbox;
  let app: WalApp;

  beforeAll(async () => {
    sandbox = await walSandbox(`schema_registry_wal_${write}`);
    const transport = new ConfluentKafkaTransport({ brokers, clientId: `sr-wal-${write}-${suffix}` });
    app = await sandbox.start({ transport, wal: { write }, schemaRegistry: { client: registry } });
    await raw.start(brokers, [ordersTopic, paymentsTopic]);
  }, 90_000);

  afterAll(async () => {
    await raw.stop();
    await sandbox?.drop();
  });

  it('an Avro and a Protobuf event round-trip in the Confluent wire format, decoded by the registry client', async () => {
    const ids = await app.dataSource.transaction((manager) =>
      app.publisher.add(manager, [
        { type: `sr.order-placed.${suffix}`, aggregateType: 'Order', aggregateId: 'o-1', topic: ordersTopic, payload: { orderId: 'o-1', total: 42.5, note: null } },
        { type: `sr.payment-taken.${suffix}`, aggregateType: 'Payment', aggregateId: 'p-1', topic: paymentsTopic, payload: { paymentId: 'p-1', amountCents: '4250', currency: 'EUR' } },
      ]),
    );
    await expectWireFormatRoundTrip(registry, raw, ids[0], ids[1]);
  }, 60_000);
});
