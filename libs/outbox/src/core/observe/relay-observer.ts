import type { ClaimedMessage, OutgoingMessage } from '../outbox-message';

/** What became of one claimed message in a batch. */
export interface MessageOutcome {
  message: ClaimedMessage;
  /** The error text when the publish failed; `undefined` when the broker acknowledged it. */
  error?: string;
  /** After a failure: the delay before the next attempt, or `null` when the row is now dead. */
  retryInMs?: number | null;
  /** Milliseconds the publish of its group took, from hand-over to acknowledgement or failure. */
  durationMs: number;
}

/** A batch after its outcome was written back to the store. */
export interface SettledBatch {
  relayId: string;
  outcomes: MessageOutcome[];
  /** Rows whose outcome was not recorded because their lease had expired and another relay took them over. */
  leaseLost: { published: number; failed: number };
  /** Set when the outcome could not be recorded at all; the leases expire and the rows are claimed again. */
  settleError?: string;
}

export interface RoundEnd {
  relayId: string;
  claimed: number;
  /** False when the claim or the settle failed, or any publish of the round failed. */
  ok: boolean;
  /**
   * True when the round reached its store both ways: the claim answered (even with nothing) and
   * the outcomes were recorded. Failed publishes do not count against it; a failed claim or settle does.
   */
  completed: boolean;
}

/**
 * Lets metrics, tracing, diagnostics channels and logs follow the relay without living in it.
 * Every method is optional and called synchronously; an observer that throws is ignored by the
 * relay (observing must never stop publishing).
 */
export interface RelayObserver {
  claimed?(relayId: string, messages: readonly ClaimedMessage[]): void;
  /**
   * A group of messages is about to be handed to `transport`. The observer may add headers to
   * `outgoing` (trace context) and return a callback told each message's error (or `undefined`).
   */
  publishing?(
    transport: string,
    messages: readonly ClaimedMessage[],
    outgoing: OutgoingMessage[],
    system?: string,
  ): ((errors: Array<string | undefined>) => void) | void;
  settled?(batch: SettledBatch): void;
  claimFailed?(relayId: string, error: unknown): void;
  roundEnded?(round: RoundEnd): void;
}

/** Several observers as one, each shielded from the others. */
export function combineObservers(observers: ReadonlyArray<RelayObserver | undefined>): RelayObserver {
  const list = observers.filter((observer): observer is RelayObserver => observer !== undefined);
  const each = <K extends keyof RelayObserver>(method: K, call: (observer: RelayObserver) => unknown) => {
    for (const observer of list) if (observer[method]) guard(() => call(observer));
  };
  return {
    claimed: (relayId, messages) => each('claimed', (o) => o.claimed!(relayId, messages)),
    publishing: (transport, messages, outgoing, system) => {
      const finishers: Array<(errors: Array<string | undefined>) => void> = [];
      each('publishing', (o) => {
        const finish = o.publishing!(transport, messages, outgoing, system);
        if (finish) finishers.push(finish);
      });
      return (errors) => finishers.forEach((finish) => guard(() => finish(errors)));
    },
    settled: (batch) => each('settled', (o) => o.settled!(batch)),
    claimFailed: (relayId, error) => each('claimFailed', (o) => o.claimFailed!(relayId, error)),
    roundEnded: (round) => each('roundEnded', (o) => o.roundEnded!(round)),
  };
}

function guard(call: () => unknown): void {
  try {
    call();
  } catch {
    // An observer's bug must not cost a publish; observers report their own errors.
  }
}
