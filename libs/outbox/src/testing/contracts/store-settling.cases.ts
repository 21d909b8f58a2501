import assert from 'node:assert/strict';
import { contractMessage, contractRun } from './contract-messages';
import { waitUntil } from './contract-runner';
import type { StoreCase } from './store-claiming.cases';
import { idsOf, LONG_MS, SHORT_MS, type Claim, type StoreCaseContext } from './store-contract.context';

/**
 * Claims `canary` again once its short lease has expired by the store's clock. Cases use it to
 * show that time has passed for the store without sleeping: whatever else that claim returns (or
 * not) is then decided by state, not by a lease that happened to still run.
 */
async function claimAfterLeaseExpired(context: StoreCaseContext, canaryId: string): Promise<Claim> {
  return waitUntil('the canary’s short lease to expire', async () => {
    const claim = await context.claim('observer', 100, SHORT_MS);
    return claim.ids.includes(canaryId) && claim;
  }, context.waitMs);
}

/** Settling a claim: published, failed (retry or dead), given back, released. */
export const SETTLING_CASES: StoreCase[] = [
  {
    name: 'markPublished returns how many messages it settled, and they are never handed out again',
    // The relay compares the count with what it asked for to detect a lease lost meanwhile; a
    // published message handed out again would be published twice.
    async run(context) {
      const published = [contractMessage({ aggregateId: 'a' }), contractMessage({ aggregateId: 'b' })];
      const canary = contractMessage({ aggregateId: 'canary' });
      await context.write(published, [canary]);
      const claim = await context.claim('relay-1', 10, SHORT_MS);
      assert.equal(await context.store.markPublished(claim.token, published.map((message) => claim.at(message.id))), 2);
      assert.deepEqual((await claimAfterLeaseExpired(context, canary.id)).ids, [canary.id]);
    },
  },
  {
    name: 'markFailed schedules a retry: not handed out before its time, handed out after with the attempt counted',
    // The retry policy's backoff is only a backoff if the store keeps to it; the attempt count is
    // what brings a failing message to maxAttempts.
    async run(context) {
      const later = contractMessage({ aggregateId: 'later' });
      const soon = contractMessage({ aggregateId: 'soon' });
      await context.write([later, soon]);
      const claim = await context.claim('relay-1', 10);
      const recorded = await context.store.markFailed(claim.token, [
        { position: claim.at(later.id), error: 'broker down', retryInMs: LONG_MS },
        { position: claim.at(soon.id), error: 'broker down', retryInMs: SHORT_MS },
      ]);
      assert.equal(recorded, 2);
      assert.deepEqual((await context.claim('relay-1', 10)).ids, [], 'a failed message was handed out before its retry time');
      const retry = await waitUntil('the short retry time to come', async () => {
        const next = await context.claim('relay-1', 10);
        return next.messages.length > 0 && next;
      }, context.waitMs);
      assert.deepEqual(retry.ids, [soon.id]);
      assert.equal(retry.messages[0].attempt, 2);
    },
  },
  {
    name: 'markFailed without a retry time (the relay’s last attempt) makes the message dead: never handed out again',
    // After maxAttempts, or for an error that is not worth retrying, the relay gives up; a dead
    // message that came back would be retried for ever. Whether it holds back its aggregate is
    // the store's dead-letter policy.
    async run(context) {
      const [doomed, behind] = contractRun('doomed', 2);
      const canary = contractMessage({ aggregateId: 'canary' });
      await context.write([doomed, behind, canary]);
      const head = await context.claim('relay-1', 1);
      assert.equal(await context.store.markFailed(head.token, [{ position: head.at(doomed.id), error: 'rejected', retryInMs: null }]), 1);
      const first = await context.claim('relay-1', 10, SHORT_MS);
      const expected = context.deadLetterPolicy === 'hold' ? [canary.id] : [behind.id, canary.id];
      assert.deepEqual(first.ids, expected, `dead-letter policy "${context.deadLetterPolicy}"`);
      const later = await claimAfterLeaseExpired(context, canary.id);
      assert.ok(!later.ids.includes(doomed.id), 'a dead message was handed out again');
    },
  },
  {
    name: 'giveBack makes messages claimable at once, uncharged: their next claim is still their first attempt',
    // The relay gives back the messages behind a failure in their aggregate's run: they were not
    // sent, and charging them would bring them to maxAttempts without ever being tried.
    async run(context) {
      const written = [contractMessage({ aggregateId: 'a' }), contractMessage({ aggregateId: 'b' })];
      await context.write(written);
      const claim = await context.claim('relay-1', 10);
      assert.equal(await context.store.giveBack(claim.token, claim.messages.map((message) => message.position)), 2);
      const again = await context.claim('relay-2', 10);
      assert.deepEqual(again.ids, idsOf(written));
      assert.deepEqual(again.messages.map((message) => message.attempt), [1, 1]);
    },
  },
  {
    name: 'settles a run as the relay does after a failure at its head: the rest, given back, waits for the retry and follows in order, uncharged',
    // The relay's sequence (giveBack, then markFailed, one token): the messages behind the failed
    // one were not sent; they must neither overtake it nor be charged for its attempt.
    async run(context) {
      const run = contractRun('busy', 3);
      await context.write(run);
      const claim = await context.claim('relay-1', 10);
      const behind = claim.ids.slice(1);
      if (behind.length > 0) assert.equal(await context.store.giveBack(claim.token, behind.map(claim.at)), behind.length);
      assert.equal(await context.store.markFailed(claim.token, [{ position: claim.at(run[0].id), error: 'refused', retryInMs: SHORT_MS }]), 1);
      assert.deepEqual((await context.claim('relay-2', 10)).ids, [], 'a message overtook the failed one of its aggregate');
      const retry = await waitUntil('the failed message’s retry time', async () => {
        const next = await context.claim('relay-2', 10);
        return next.messages.length > 0 && next;
      }, context.waitMs);
      assert.deepEqual(retry.ids, idsOf(run).slice(0, retry.ids.length));
      assert.deepEqual(retry.messages.map((message) => message.attempt), [2, ...retry.messages.slice(1).map(() => 1)]);
    },
  },
  {
    name: 'release hands back the pending messages an owner holds, uncharged, and no other owner’s',
    // A relay that shuts down releases its leases so that another instance need not wait for them to expire.
    async run(context) {
      const [mine, theirs] = [contractMessage({ aggregateId: 'mine' }), contractMessage({ aggregateId: 'theirs' })];
      await context.write([mine, theirs]);
      await context.claim('stopping', 1);
      await context.claim('running', 1);
      assert.equal(await context.store.release('stopping'), 1);
      const next = await context.claim('successor', 10);
      assert.deepEqual(next.ids, [mine.id]);
      assert.equal(next.messages[0].attempt, 1);
    },
  },
];

/** Fencing: a claim that lost its lease cannot settle what the claim that took over holds. */
export const FENCING_CASES: StoreCase[] = [
  {
    name: 'a claim whose expired lease was taken over (same owner) can neither publish, fail nor give back the message',
    // A relay stalled past its lease (GC pause, slow broker) settles late; overwriting the new
    // holder's outcome would lose a retry or mark unpublished work done. Relay ids may be shared.
    async run(context) {
      const [message] = [contractMessage({ aggregateId: 'a' })];
      await context.write([message]);
      const stalled = await context.claim('relay-1', 10, SHORT_MS);
      const current = await waitUntil('the lease to expire and the message to be claimed again', async () => {
        const claim = await context.claim('relay-1', 10, LONG_MS);
        return claim.messages.length > 0 && claim;
      }, context.waitMs);
      const position = stalled.at(message.id);
      assert.equal(current.at(message.id), position);
      assert.equal(await context.store.markFailed(stalled.token, [{ position, error: 'late', retryInMs: null }]), 0);
      assert.equal(await context.store.giveBack(stalled.token, [position]), 0);
      assert.equal(await context.store.markPublished(stalled.token, [position]), 0);
      assert.deepEqual((await context.claim('relay-2', 10)).ids, [], 'a stale claim freed the lease of the current one');
      assert.equal(await context.store.markPublished(current.token, [position]), 1, 'the current claim lost its message to a stale one');
    },
  },
];
