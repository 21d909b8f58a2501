/* What the stream relay's unit specs share: commits of messages, a broker and a table double, a relay over them. */
import type { OutgoingMessage } from '../outbox-message';
import type { OutboxTransport } from '../outbox-transport.port';
import { RetryPolicy } from '../retry-policy';
import type { StreamCommit, StreamMessage } from './stream-message';
import { StreamRelay, type StreamRelayConfig } from './stream-relay';
import { aggregateOf, type StreamOverflow, type TableBacklog } from './stream-overflow.port';

export const message = (commit: bigint, index: number, aggregateId: string): StreamMessage => ({
  id: `${commit}-${index}`,
  type: 'thing.happened',
  version: 1,
  aggregateType: 'thing',
  aggregateId,
  transport: 'default',
  destination: 'things',
  occurredAt: new Date(0).toISOString(),
  headers: {},
  payloadJson: JSON.stringify({ commit: String(commit), index }),
  commit,
  index,
});
export const commit = (lsn: bigint, ...aggregates: string[]): StreamCommit => ({ lsn, messages: aggregates.map((a, i) => message(lsn, i, a)) });

/** A broker double: acknowledges unless told to refuse, or holds publishes until released. */
export class FakeBroker implements OutboxTransport {
  readonly name = 'fake';
  readonly published: OutgoingMessage[] = [];
  refuse = 0;
  refuseKey: string | undefined;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }
  async publish(outgoing: OutgoingMessage): Promise<void> {
    await this.gate;
    if (outgoing.key === this.refuseKey) throw new Error(`no leader for ${outgoing.key}`);
    if (this.refuse > 0) {
      this.refuse--;
      throw new Error('broker down');
    }
    this.published.push(outgoing);
  }
}

/** The table double: keeps what was diverted, and reports those aggregates as backlogged until drained. */
export class FakeTable implements StreamOverflow {
  readonly rows: Array<{ id: string; attempts: number; error: string }> = [];
  readonly backlog = new Set<string>();
  readonly paused = new Set<string>();
  asked = 0;
  async divert(messages: ReadonlyArray<{ message: StreamMessage; attempts: number; error: string }>): Promise<void> {
    for (const { message, attempts, error } of messages) {
      this.rows.push({ id: message.id, attempts, error });
      this.backlog.add(aggregateOf(message));
    }
  }
  async backlogged(aggregates: ReadonlyArray<Pick<StreamMessage, 'aggregateType' | 'aggregateId'>>): Promise<TableBacklog> {
    this.asked++;
    return { aggregates: new Set(aggregates.map(aggregateOf).filter((key) => this.backlog.has(key))), any: this.backlog.size > 0 };
  }
  async held(): Promise<{ aggregates: Set<string>; complete: boolean }> {
    this.asked++;
    return { aggregates: new Set(this.backlog), complete: true };
  }
  async pausedDestinations(): Promise<string[]> {
    return [...this.paused];
  }
  /** Ids an earlier stream handed on (moved to the table, or published and its row deleted). */
  readonly handed = new Set<string>();
  readonly askedHandedOn: string[][] = [];
  async replayWindow(): Promise<bigint | undefined> {
    return undefined;
  }
  async handedOn(messages: ReadonlyArray<StreamMessage>): Promise<Set<string>> {
    this.askedHandedOn.push(messages.map((message) => message.id));
    return new Set(messages.map((message) => message.id).filter((id) => this.handed.has(id) || this.rows.some((row) => row.id === id)));
  }
}

export function relayOn(broker: FakeBroker, confirmed: bigint[], batchSize = 2, maxBuffered = 4, overflow?: StreamOverflow, more: Partial<StreamRelayConfig> = {}): StreamRelay {
  return new StreamRelay({
    ...more,
    overflow,
    divertAfterAttempts: 2,
    transports: new Map([['default', broker]]),
    batchSize,
    maxBuffered,
    publishTimeoutMs: 1_000,
    retryPolicy: new RetryPolicy(Number.MAX_SAFE_INTEGER, { initialMs: 1, maxMs: 2, jitter: 0 }),
    observer: {},
    relayId: 'stream-test',
    logger: { warn: () => undefined },
    confirm: (lsn) => void confirmed.push(lsn),
  });
}

/** Waits for a condition with a deadline: retries run on timers, which a loaded machine delays. */
export const settled = async (condition: () => boolean, deadlineMs = 5_000) => {
  const deadline = Date.now() + deadlineMs;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  expect(condition()).toBe(true);
};
