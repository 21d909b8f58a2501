import { registerNotChecked, resolveRunner, type ContractRunner } from './contract-runner';
import type { OpenTransport, OutboxTransportContractSubject } from './transport-contract.context';
import {
  batchKeepsKeyOrder,
  batchReportsEachMessage,
  describesItself,
  envelopeArrivesIntact,
  publishesOneKeyInOrder,
  publishResolvesOnceAtTheBroker,
  unreachableBatchAcknowledgesNone,
  unreachablePublishFails,
  type TransportCaseContext,
} from './transport.cases';

export type { OutboxTransportContractSubject, OpenTransport, BrokerDestination, ReceivedMessage } from './transport-contract.context';

/**
 * Registers the promises the relay relies on from an `OutboxTransport`, as tests of your runner,
 * against a real broker: a resolved publish means the broker has the message; the envelope, key
 * and headers arrive intact; `publishBatch` reports each message; `keepsKeyOrderInBatch` holds; an
 * unreachable broker never looks like success. Each test opens and closes its own transport and
 * destination. `runner` as for `describeOutboxStoreContract`.
 */
export function describeOutboxTransportContract(subject: OutboxTransportContractSubject, runner?: Partial<ContractRunner>): void {
  const { describe, it } = resolveRunner(runner, 'describeOutboxTransportContract');
  const onBroker = (name: string, run: (context: TransportCaseContext) => Promise<void>) => it(name, () => withBroker(subject, run));
  const publishTimeoutMs = subject.publishTimeoutMs ?? 5_000;
  const batches = subject.batching !== 'none';

  describe(`OutboxTransport contract: ${subject.name}`, () => {
    // The relay picks how to send a claim from these fields; a transport that says more than it does misleads it.
    it(`names itself, states a known acknowledgement, and batches as declared (${subject.batching})`, () =>
      withTransport(() => subject.createTransport(), (open) => describesItself(open.transport, subject.batching)),
    );
    // The relay marks a message published as soon as publish resolves: resolving earlier loses it on a crash.
    onBroker('publish resolves only once the broker has the message: it arrives once, though the transport closes right after', publishResolvesOnceAtTheBroker);
    // Consumers read the envelope (and key and headers) exactly as the relay built it from the row.
    onBroker(`the envelope arrives intact${carried(subject)}`, envelopeArrivesIntact);
    // Without a batch the relay publishes one message of a key only after the previous one resolved.
    onBroker('messages of one key published one after another arrive in that order', publishesOneKeyInOrder);

    describe('publishBatch', () => {
      const batchCase = 'returns one outcome per message, in order, and every message it acknowledged arrives';
      // The relay settles each message of a batch by its own outcome.
      if (batches) onBroker(batchCase, batchReportsEachMessage);
      else registerNotChecked(it, batchCase, 'the transport has no publishBatch (batching: none)');
      const orderCase = 'keeps the order of one key’s messages within a batch';
      // The relay hands such a transport several messages of one key in one call, trusting their order.
      if (subject.batching === 'keeps-key-order') onBroker(orderCase, batchKeepsKeyOrder);
      else registerNotChecked(it, orderCase, `keepsKeyOrderInBatch is not set (batching: ${subject.batching}), so the relay never batches two messages of one key`);
    });

    describe('an unreachable broker', () => {
      const unreachable = subject.unreachable;
      const publishCase = 'publish rejects, or does not resolve within publishTimeoutMs';
      const batchCase = 'publishBatch acknowledges none of the messages';
      if ('notChecked' in unreachable) {
        registerNotChecked(it, publishCase, unreachable.notChecked);
        if (batches) registerNotChecked(it, batchCase, unreachable.notChecked);
        return;
      }
      // A publish that resolved would make the relay mark published a message no broker has.
      it(publishCase, () => withTransport(() => unreachable.createTransport(), (open) => unreachablePublishFails(open, publishTimeoutMs)));
      if (batches) it(batchCase, () => withTransport(() => unreachable.createTransport(), (open) => unreachableBatchAcknowledgesNone(open, publishTimeoutMs)));
    });
  });
}

function carried(subject: OutboxTransportContractSubject): string {
  const parts = [subject.carries.key && 'key', subject.carries.headers && 'headers'].filter(Boolean);
  return parts.length > 0 ? `, with its ${parts.join(' and ')}` : ' (the broker carries no key or headers)';
}

async function withTransport(create: () => Promise<OpenTransport>, run: (open: OpenTransport) => Promise<void>): Promise<void> {
  const open = closingOnce(await create());
  try {
    await run(open);
  } finally {
    await open.close();
  }
}

async function withBroker(subject: OutboxTransportContractSubject, run: (context: TransportCaseContext) => Promise<void>): Promise<void> {
  const destination = await subject.openDestination();
  try {
    await withTransport(() => subject.createTransport(), (open) => run({ subject, open, destination, waitMs: subject.waitMs ?? 10_000 }));
  } finally {
    await destination.close();
  }
}

/** A case may close the transport early (to show what a resolved publish survives); the suite closes it once. */
function closingOnce(open: OpenTransport): OpenTransport {
  let closing: Promise<void> | undefined;
  return { transport: open.transport, close: () => (closing ??= open.close()) };
}
