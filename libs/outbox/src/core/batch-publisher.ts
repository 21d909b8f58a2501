import type { ClaimedMessage, OutgoingMessage } from './outbox-message';
import type { OutboxTransport } from './outbox-transport.port';
import { noTransportForRow } from './outbox.messages';
import { classifyFailure, type PublishFailure, type RetryIf } from './failure-classification';
import type { RelayObserver } from './observe/relay-observer';
import { inOrderOfKey, NOT_SENT, runsByKey, type SendResult } from './batch-runs';
import { errorText } from './error-text';

/**
 * Hands the rows of one claimed batch to their transports and collects each row's outcome,
 * waiting at most `publishTimeoutMs` per call. Knows nothing of the store: the relay settles.
 */
export class BatchPublisher {
  constructor(
    private readonly transports: ReadonlyMap<string, OutboxTransport>,
    private readonly observer: RelayObserver,
    private readonly publishTimeoutMs: number,
    private readonly retryIf?: RetryIf,
  ) {}

  /**
   * One entry per message, in order: `undefined` when acknowledged, the failure to record, or
   * `NOT_SENT` for a row behind a failed row of its aggregate; and how long each took.
   */
  async publishAll(
    messages: ClaimedMessage[],
    decoded: ReadonlyMap<string, OutgoingMessage>,
    acknowledged: string[],
  ): Promise<{ results: SendResult[]; durations: number[] }> {
    const results = new Array<SendResult>(messages.length);
    const durations = new Array<number>(messages.length).fill(0);
    const byTransport = new Map<string, number[]>();
    messages.forEach((message, index) => {
      const indexes = byTransport.get(message.transport);
      if (indexes) indexes.push(index);
      else byTransport.set(message.transport, [index]);
    });
    await Promise.all(
      [...byTransport].map(async ([name, indexes]) => {
        const transport = this.transports.get(name);
        const group = indexes.map((index) => messages[index]);
        const outcomes = transport
          ? await this.publishGroup(name, transport, group, decoded, acknowledged)
          : { results: inOrderOfKey(group, () => ({ text: noTransportForRow(name), final: false })), durations: group.map(() => 0) };
        indexes.forEach((index, position) => {
          results[index] = outcomes.results[position];
          durations[index] = outcomes.durations[position];
        });
      }),
    );
    return { results, durations };
  }

  /**
   * A claim may carry several rows of one aggregate and destination. A transport that keeps their
   * order within one batch call gets them all at once; any other gets them in waves (the first
   * row of every aggregate, then the second of those that succeeded, …), so that it never holds
   * two rows of one aggregate at the same time. Rows behind a failure are not sent.
   */
  private async publishGroup(
    name: string,
    transport: OutboxTransport,
    messages: ClaimedMessage[],
    decoded: ReadonlyMap<string, OutgoingMessage>,
    acknowledged: string[],
  ): Promise<{ results: SendResult[]; durations: number[] }> {
    const results = new Array<SendResult>(messages.length).fill(NOT_SENT);
    const acknowledge = (indexes: number[]) => indexes.forEach((index) => results[index] === undefined && acknowledged.push(messages[index].position));
    const durations = new Array<number>(messages.length).fill(0);
    const send = async (indexes: number[]) => {
      const wave = indexes.map((index) => messages[index]);
      const outgoing = wave.map((message) => decoded.get(message.position) as OutgoingMessage);
      const finish = this.observer.publishing?.(name, wave, outgoing, transport.name);
      const started = performance.now();
      const errors = await this.send(transport, outgoing);
      const took = performance.now() - started;
      finish?.(errors.map((error) => error?.text));
      indexes.forEach((index, position) => {
        results[index] = errors[position];
        durations[index] = took;
      });
    };
    if (transport.publishBatch && transport.keepsKeyOrderInBatch) {
      const all = messages.map((_, index) => index);
      await send(all);
      // What follows a failure in its aggregate is treated as not sent: never marked published, not charged.
      if (results.some((result) => result !== undefined)) {
        for (const run of runsByKey(messages)) run.slice(run.findIndex((index) => results[index] !== undefined) + 1 || run.length).forEach((index) => (results[index] = NOT_SENT));
      }
      acknowledge(all);
      return { results, durations };
    }
    const runs = runsByKey(messages);
    for (let depth = 0; ; depth++) {
      const wave = runs.filter((run) => depth < run.length && (depth === 0 || results[run[depth - 1]] === undefined)).map((run) => run[depth]);
      if (wave.length === 0) return { results, durations };
      await send(wave);
      acknowledge(wave);
    }
  }

  private failure(error: unknown): PublishFailure {
    return classifyFailure(error, errorText(error), this.retryIf);
  }

  private async send(transport: OutboxTransport, outgoing: OutgoingMessage[]): Promise<Array<PublishFailure | undefined>> {
    if (transport.publishBatch && outgoing.length > 1) {
      try {
        const outcomes = await this.withTimeout(transport, transport.publishBatch(outgoing));
        return outgoing.map((_, index) => (outcomes[index] === undefined ? undefined : this.failure(outcomes[index])));
      } catch (error) {
        return outgoing.map(() => this.failure(error));
      }
    }
    return Promise.all(
      outgoing.map((message) =>
        this.withTimeout(transport, transport.publish(message)).then(
          () => undefined,
          (error: unknown) => this.failure(error),
        ),
      ),
    );
  }

  private async withTimeout<T>(transport: OutboxTransport, publishing: Promise<T>): Promise<T> {
    const { publishTimeoutMs } = this;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${transport.name}: no acknowledgement within publishTimeoutMs (${publishTimeoutMs} ms)`)),
        publishTimeoutMs,
      );
    });
    try {
      return await Promise.race([publishing, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
