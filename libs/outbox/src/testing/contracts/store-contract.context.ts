import { randomUUID } from 'node:crypto';
import assert from 'node:assert/strict';
import type { ClaimedMessage, NewOutboxMessage } from '../../core/outbox-message';
import type { OutboxStore } from '../../core/outbox-store.port';

/** One store for one test, over storage nobody else uses. */
export interface StoreUnderTest {
  store: OutboxStore;
  /**
   * Saves pending messages in one committed transaction, in the order given, as your
   * `OutboxWriterPort.write` does: later messages get later positions.
   */
  write(messages: NewOutboxMessage[]): Promise<void>;
  /** Frees what `createStore` took (connections, schema, files). Called once, after each test. */
  close(): Promise<void>;
}

export interface OutboxStoreContractSubject {
  /** Shown in the suite's title, e.g. `CockroachDB store`. */
  name: string;
  /** A fresh store with no messages, for one test. */
  createStore(): Promise<StoreUnderTest>;
  /**
   * What a dead message does to the later messages of its aggregate and destination: `hold` (the
   * library's default) keeps them back until an operator requeues or discards it; `skip` lets them go.
   */
  deadLetterPolicy?: 'hold' | 'skip';
  /**
   * How long a case may wait for a short lease or retry time (a few hundred ms) to pass by the
   * store's clock. Default 5000 ms; give your runner's test timeout at least twice that.
   */
  waitMs?: number;
}

/** A lease or retry time that passes while a case waits for it. */
export const SHORT_MS = 200;
/** A lease or retry time that does not pass during a case. */
export const LONG_MS = 60_000;

/** What every case gets: the store, a writer, and claims with fresh tokens. */
export class StoreCaseContext {
  constructor(
    readonly subject: StoreUnderTest,
    readonly waitMs: number,
    readonly deadLetterPolicy: 'hold' | 'skip',
  ) {}

  get store(): OutboxStore {
    return this.subject.store;
  }

  async write(...groups: NewOutboxMessage[][]): Promise<void> {
    await this.subject.write(groups.flat());
  }

  /** A claim with a token of its own, as the relay makes one per round. */
  async claim(owner: string, limit: number, leaseMs: number = LONG_MS): Promise<Claim> {
    const token = randomUUID();
    // Copied into this realm's arrays and objects: under jest, a driver's arrays come from another
    // realm, and node:assert's strict comparison tells their prototypes apart.
    const messages = Array.from(await this.store.claim({ owner, token, limit, leaseMs }), (message) => ({ ...message, headers: { ...message.headers } }));
    return { token, messages, ids: messages.map((message) => message.id), at: (id) => positionOf(messages, id) };
  }
}

export interface Claim {
  token: string;
  messages: ClaimedMessage[];
  /** Message ids in the order the store returned them. */
  ids: string[];
  /** The position of a claimed message, by id; fails when the claim does not hold it. */
  at(id: string): string;
}

function positionOf(messages: ClaimedMessage[], id: string): string {
  const message = messages.find((candidate) => candidate.id === id);
  assert.ok(message, `the claim does not hold message ${id}`);
  return message.position;
}

export const idsOf = (messages: NewOutboxMessage[]): string[] => messages.map((message) => message.id);
