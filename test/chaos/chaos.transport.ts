import type { OutboxTransport } from '@nest-outbox/outbox';
import type { OutgoingMessage } from '@nest-outbox/outbox/core';
import { BATCH_HEADER, errorText, RELAY_HEADER, type RelayReport } from './chaos.protocol';

export class InjectedPublishError extends Error {
  override readonly name = 'InjectedPublishError';
}

/**
 * Wraps the real Kafka transport (ClientProxyTransport around the Nest ClientKafka):
 * - fails a random share of messages before they reach Kafka (transient publish errors);
 * - stamps each record with the relay id and a per-relay batch number, so the ledger can tell
 *   which send produced a copy;
 * - reports every batch to the orchestrator, including sends acknowledged only after the
 *   relay's publishTimeoutMs (the relay has counted them as failed and will send them again).
 *
 * A batch here is one claim: the relay may publish a claim in several calls (waves, when it carries
 * several rows of one aggregate) while it claims and publishes others (several batches in flight),
 * and settles each claim once. The claim's number comes with the messages, in the BATCH_HEADER that
 * ClaimNumbering (relay.main.ts) puts on them as the relay hands them over.
 */
export class ChaosTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement = 'broker' as const;
  private holdNextMs = 0;

  constructor(
    private readonly inner: OutboxTransport,
    private readonly relayId: string,
    private readonly errorRate: number,
    private readonly publishTimeoutMs: number,
    private readonly report: (message: RelayReport) => void,
    private readonly random: () => number = Math.random,
  ) {
    this.name = inner.name;
  }

  /**
   * Holds the next acknowledged batch for `ms` before handing the outcome back to the relay, so
   * that the orchestrator's kill or stop lands between the broker's acknowledgement and the
   * relay's settle (a window of a millisecond or two otherwise). Must stay well under
   * publishTimeoutMs, or the relay would count the batch as failed.
   */
  arm(ms: number): void {
    this.holdNextMs = ms;
  }

  async publish(message: OutgoingMessage): Promise<void> {
    const [outcome] = await this.publishBatch([message]);
    if (outcome) throw outcome;
  }

  async publishBatch(messages: OutgoingMessage[]): Promise<Array<Error | undefined>> {
    // One call carries rows of one claim only.
    const batch = Number(messages[0]?.headers[BATCH_HEADER] ?? 0);
    const outcomes = new Array<Error | undefined>(messages.length);
    const forwarded: number[] = [];
    messages.forEach((message, index) => {
      if (this.random() < this.errorRate) outcomes[index] = new InjectedPublishError(`injected publish failure (${this.relayId} batch ${batch})`);
      else forwarded.push(index);
    });
    const injected = messages.length - forwarded.length;
    this.report({ t: 'sending', relayId: this.relayId, batch, size: forwarded.length, injected, ids: forwarded.map((index) => messages[index].envelope.id) });
    if (forwarded.length === 0) return outcomes;

    const stamped = forwarded.map((index) => ({ ...messages[index], headers: { ...messages[index].headers, [RELAY_HEADER]: this.relayId } }));
    const started = Date.now();
    let results: Array<Error | undefined>;
    let error: string | undefined;
    try {
      results = this.inner.publishBatch ? await this.inner.publishBatch(stamped) : await Promise.all(stamped.map((m) => this.inner.publish(m).then(() => undefined, toError)));
    } catch (failure) {
      error = errorText(failure);
      results = stamped.map(() => toError(failure));
    }
    const elapsedMs = Date.now() - started;
    results.forEach((result, position) => (outcomes[forwarded[position]] = result));
    const failed = results.filter((result) => result !== undefined);
    if (failed.length > 0 && !error) error = errorText(failed[0]);
    this.report({
      t: 'sent',
      relayId: this.relayId,
      batch,
      size: forwarded.length,
      ok: results.length - failed.length,
      failed: failed.length,
      // The relay stopped waiting at publishTimeoutMs (small margin for timer ordering).
      late: elapsedMs >= this.publishTimeoutMs - 50,
      elapsedMs,
      error,
    });
    if (this.holdNextMs > 0 && failed.length < results.length) {
      const hold = this.holdNextMs;
      this.holdNextMs = 0;
      await new Promise((resolve) => setTimeout(resolve, hold));
    }
    return outcomes;
  }

  close(): Promise<void> {
    return this.inner.close?.() ?? Promise.resolve();
  }
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
