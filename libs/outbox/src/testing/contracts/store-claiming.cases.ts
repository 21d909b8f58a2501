import assert from 'node:assert/strict';
import { contractMessage, contractRun } from './contract-messages';
import { idsOf, LONG_MS, SHORT_MS, type StoreCaseContext } from './store-contract.context';
import { waitUntil } from './contract-runner';

export interface StoreCase {
  name: string;
  run(context: StoreCaseContext): Promise<void>;
}

/** Claims and leases: which messages a claim may hand out, and to whom. */
export const CLAIMING_CASES: StoreCase[] = [
  {
    name: 'claims pending messages in write order, each as written, on its first attempt',
    // The relay publishes a claim in the order returned and builds each envelope from the claimed
    // fields alone; write order is commit order, the order consumers of one aggregate must see.
    async run(context) {
      const written = [contractMessage({ aggregateId: 'a' }), contractMessage({ aggregateId: 'b' }), contractMessage({ aggregateId: 'c' })];
      await context.write(written);
      const claim = await context.claim('relay-1', 10);
      assert.deepEqual(claim.ids, idsOf(written));
      claim.messages.forEach((claimed, index) => {
        const { occurredAt, delayMs: _notClaimed, ...fields } = written[index];
        const { position, attempt, occurredAt: claimedAt, payloadJson, decodeError, ...claimedFields } = claimed;
        const { payloadJson: writtenPayload, ...writtenFields } = fields;
        assert.deepEqual(claimedFields, writtenFields, 'claimed fields differ from the written ones');
        // Stores may re-serialize JSON (a jsonb column orders keys); the value must be the same.
        assert.deepEqual(JSON.parse(payloadJson), JSON.parse(writtenPayload));
        assert.equal(new Date(claimedAt).toISOString(), occurredAt.toISOString());
        assert.equal(attempt, 1, 'attempt counts the attempt about to be made');
        assert.equal(typeof position, 'string');
        assert.equal(decodeError, undefined);
      });
      assert.equal(new Set(claim.messages.map((message) => message.position)).size, written.length, 'positions are distinct');
    },
  },
  {
    name: 'claims at most `limit` messages; the next claim takes the following ones',
    // batchSize bounds what one relay round holds in memory and in flight.
    async run(context) {
      const written = ['a', 'b', 'c'].map((aggregateId) => contractMessage({ aggregateId }));
      await context.write(written);
      assert.deepEqual((await context.claim('relay-1', 2)).ids, idsOf(written.slice(0, 2)));
      assert.deepEqual((await context.claim('relay-1', 2)).ids, idsOf(written.slice(2)));
      assert.deepEqual((await context.claim('relay-1', 2)).ids, []);
    },
  },
  {
    name: 'does not hand out a message while another claim holds its lease, even under the same owner',
    // Two relays, or two rounds of one relay whose previous round is still publishing, must never
    // publish the same message at once; the token, not the owner, tells claims apart.
    async run(context) {
      const written = ['a', 'b', 'c'].map((aggregateId) => contractMessage({ aggregateId }));
      await context.write(written);
      await context.claim('relay-1', 2);
      assert.deepEqual((await context.claim('relay-2', 10)).ids, idsOf(written.slice(2)));
      assert.deepEqual((await context.claim('relay-1', 10)).ids, []);
    },
  },
  {
    name: 'concurrent claims never hand out the same message twice, and together hand out all',
    // Relays on several instances claim at the same moment; a message in two claims is published twice.
    async run(context) {
      const written = Array.from({ length: 24 }, (_, index) => contractMessage({ aggregateId: `agg-${index}` }));
      await context.write(written);
      const claims = await Promise.all(['r1', 'r2', 'r3', 'r4'].map((owner) => context.claim(owner, 8)));
      const claimed = claims.flatMap((claim) => claim.ids);
      assert.equal(new Set(claimed).size, claimed.length, 'a message was in two concurrent claims');
      const rest = await context.claim('r5', 24);
      assert.deepEqual([...claimed, ...rest.ids].sort(), idsOf(written).sort());
    },
  },
  {
    name: 'claims a message again once its lease has expired, counting a second attempt',
    // A relay that crashed never settles; its messages must come back by themselves, and the attempt
    // it may have made counts towards maxAttempts.
    async run(context) {
      const [message] = await writeOne(context, 'a');
      await context.claim('crashed', 10, SHORT_MS);
      const again = await waitUntil('the expired lease to be claimable', async () => {
        const claim = await context.claim('successor', 10);
        return claim.messages.length > 0 && claim;
      }, context.waitMs);
      assert.deepEqual(again.ids, [message.id]);
      assert.equal(again.messages[0].attempt, 2);
    },
  },
  {
    name: 'does not claim a message delayed at writing before its time, and holds back its aggregate meanwhile',
    // delayMs / deliverAt: the message waits in the outbox and, like any pending message, keeps
    // the later messages of its aggregate behind it.
    async run(context) {
      const delayed = contractMessage({ aggregateId: 'a', delayMs: LONG_MS });
      const behind = contractMessage({ aggregateId: 'a' });
      const other = contractMessage({ aggregateId: 'b' });
      const soon = contractMessage({ aggregateId: 'c', delayMs: SHORT_MS });
      const writing = Date.now();
      await context.write([delayed, behind, other, soon]);
      const first = (await context.claim('relay-1', 10)).ids;
      // On a slow machine the short delay may be over by the first claim: only then may it be in it.
      const soonDue = Date.now() - writing >= SHORT_MS;
      assert.deepEqual(first.filter((id) => id !== soon.id || !soonDue), [other.id]);
      if (first.includes(soon.id)) return;
      const later = await waitUntil('the short delay to pass', async () => {
        const claim = await context.claim('relay-1', 10);
        return claim.messages.length > 0 && claim;
      }, context.waitMs);
      assert.deepEqual(later.ids, [soon.id]);
    },
  },
];

/** The ordering rule: one aggregate's messages to one destination go out in write order. */
export const ORDERING_CASES: StoreCase[] = [
  {
    name: 'may hand out several messages of one aggregate in one claim, but only from its earliest unpublished one, in order',
    // The relay publishes a claimed run in order and gives back what follows a failure; a later
    // message claimed without the earlier ones could overtake them.
    async run(context) {
      const run = contractRun('busy', 4);
      const other = contractMessage({ aggregateId: 'other' });
      await context.write(run, [other]);
      const claim = await context.claim('relay-1', 10);
      const ofRun = claim.ids.filter((id) => id !== other.id);
      assert.ok(ofRun.length >= 1, 'the earliest message of the aggregate was not claimed');
      assert.deepEqual(ofRun, idsOf(run).slice(0, ofRun.length), 'the claimed messages of one aggregate are not its earliest, in order');
      assert.ok(claim.ids.includes(other.id), 'another aggregate was not served');
    },
  },
  {
    name: 'hands out nothing of an aggregate whose earliest unpublished message another claim holds, and still serves other aggregates',
    // Two relays publishing one aggregate at once would reorder it.
    async run(context) {
      const run = contractRun('busy', 4);
      const other = contractMessage({ aggregateId: 'other' });
      await context.write(run, [other]);
      assert.deepEqual((await context.claim('relay-1', 1)).ids, [run[0].id]);
      assert.deepEqual((await context.claim('relay-2', 10)).ids, [other.id]);
    },
  },
  {
    name: 'hands out the next message of an aggregate once the earlier one is published',
    // Publishing frees the aggregate; without this a busy aggregate would stall after one message.
    async run(context) {
      const run = contractRun('busy', 3);
      await context.write(run);
      const first = await context.claim('relay-1', 1);
      assert.equal(await context.store.markPublished(first.token, [first.at(run[0].id)]), 1);
      assert.deepEqual((await context.claim('relay-2', 1)).ids, [run[1].id]);
    },
  },
  {
    name: 'keeps an aggregate behind a message waiting for its retry, without spending the claim’s limit on it',
    // Order holds across retries; and messages that cannot go must not fill a claim, or a busy
    // failing aggregate would starve every aggregate written after it.
    async run(context) {
      const run = contractRun('busy', 5);
      const other = contractMessage({ aggregateId: 'other' });
      await context.write(run, [other]);
      const head = await context.claim('relay-1', 1);
      assert.equal(await context.store.markFailed(head.token, [{ position: head.at(run[0].id), error: 'broker down', retryInMs: LONG_MS }]), 1);
      assert.deepEqual((await context.claim('relay-2', 2)).ids, [other.id]);
    },
  },
];

async function writeOne(context: StoreCaseContext, aggregateId: string) {
  const written = [contractMessage({ aggregateId })];
  await context.write(written);
  return written;
}
