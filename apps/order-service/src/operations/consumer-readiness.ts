import { Injectable, type INestMicroservice } from '@nestjs/common';
import type { Consumer } from 'kafkajs';

export type ConsumerState = 'joining' | 'ready' | 'failed';

/**
 * Whether the event consumer has joined its broker and is still consuming. The HTTP API takes
 * orders without it (the outbox keeps their events until they are delivered), so it has a readiness
 * of its own: `/health/consumer`.
 */
@Injectable()
export class ConsumerReadiness {
  private state: ConsumerState = 'joining';
  private since = new Date();
  private error: string | undefined;
  private readonly kafkaConsumers = new Set<Consumer>();

  /**
   * Follows the microservices' consumers from before they start. A Kafka consumer can crash while
   * its startup is still under way (kafkajs ends `run()` after a failed group join without throwing),
   * and listeners added once the startup ended missed that crash and reported it ready: so the
   * kafkajs consumer is watched from its first status, which Nest's server reports as soon as it
   * connects, before it joins.
   */
  follow(microservices: INestMicroservice[]): void {
    for (const microservice of microservices) {
      microservice.status.subscribe(() => {
        const consumer = kafkaConsumerOf(microservice);
        if (!consumer || this.kafkaConsumers.has(consumer)) return;
        this.kafkaConsumers.add(consumer);
        this.watch(consumer);
      });
    }
  }

  /**
   * The startup of all microservices, without holding up the caller. A Kafka consumer is ready when
   * it has joined its group (its events say so, see follow()); a transport without one (TCP) when
   * its listener is up.
   */
  track(starting: Promise<unknown>): void {
    this.set('joining');
    starting.then(
      () => {
        if (this.kafkaConsumers.size === 0) this.set('ready');
      },
      (error: unknown) => this.set('failed', error instanceof Error ? error.message : String(error)),
    );
  }

  snapshot(): { state: ConsumerState; since: string; error?: string } {
    return { state: this.state, since: this.since.toISOString(), ...(this.error ? { error: this.error } : {}) };
  }

  /**
   * A consumer that stops, or crashes without a restart, no longer consumes although the app still
   * runs, so it is reported down; one that crashes and restarts is joining again until it has
   * rejoined its group.
   */
  private watch(consumer: Consumer): void {
    consumer.on(consumer.events.GROUP_JOIN, () => this.set('ready'));
    consumer.on(consumer.events.STOP, () => this.set('failed', 'the Kafka consumer stopped'));
    consumer.on(consumer.events.CRASH, ({ payload }) =>
      payload.restart ? this.set('joining', `restarting after: ${payload.error.message}`) : this.set('failed', `the Kafka consumer stopped after: ${payload.error.message}`),
    );
  }

  private set(state: ConsumerState, error?: string): void {
    this.state = state;
    this.since = new Date();
    this.error = error;
  }
}

/** The kafkajs consumer of a Nest Kafka microservice (`unwrap()` gives [client, consumer, producer]); undefined for other transports. */
function kafkaConsumerOf(microservice: INestMicroservice): Consumer | undefined {
  try {
    const unwrapped = microservice.unwrap<unknown>();
    const consumer = Array.isArray(unwrapped) ? (unwrapped[1] as Consumer | null) : undefined;
    return consumer && typeof consumer.on === 'function' && consumer.events ? consumer : undefined;
  } catch {
    return undefined;
  }
}
