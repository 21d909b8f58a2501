import { resolveRunner, type ContractRunner } from './contract-runner';
import { CLAIMING_CASES, ORDERING_CASES, type StoreCase } from './store-claiming.cases';
import { FENCING_CASES, SETTLING_CASES } from './store-settling.cases';
import { StoreCaseContext, type OutboxStoreContractSubject } from './store-contract.context';

export type { OutboxStoreContractSubject, StoreUnderTest } from './store-contract.context';

/**
 * Registers the promises the relay relies on from an `OutboxStore`, as tests of your runner, at
 * the port level (no Nest, no ORM): claims in write order under leases, the ordering rule of one
 * aggregate, retries and dead messages, giving back, release, and fencing of stale claims. Each
 * test gets its own store from `subject.createStore()` and closes it, pass or fail.
 *
 * `runner` defaults to the globals `describe` and `it` (jest, vitest with globals, mocha); pass
 * node:test's or vitest's imports otherwise. Assertions use `node:assert/strict`.
 */
export function describeOutboxStoreContract(subject: OutboxStoreContractSubject, runner?: Partial<ContractRunner>): void {
  const { describe, it } = resolveRunner(runner, 'describeOutboxStoreContract');
  const register = (cases: StoreCase[]) => cases.forEach((storeCase) => it(storeCase.name, () => runCase(subject, storeCase)));
  describe(`OutboxStore contract: ${subject.name}`, () => {
    describe('claiming', () => register(CLAIMING_CASES));
    describe('the ordering rule of one aggregate and destination', () => register(ORDERING_CASES));
    describe('settling', () => register(SETTLING_CASES));
    describe('fencing', () => register(FENCING_CASES));
  });
}

async function runCase(subject: OutboxStoreContractSubject, storeCase: StoreCase): Promise<void> {
  const underTest = await subject.createStore();
  try {
    await storeCase.run(new StoreCaseContext(underTest, subject.waitMs ?? 5_000, subject.deadLetterPolicy ?? 'hold'));
  } finally {
    await underTest.close();
  }
}
