import { Injectable } from '@nestjs/common';

export type ConsumerState = 'joining' | 'ready' | 'failed';

/**
 * Whether the event consumer has joined its broker. The HTTP API takes orders without it (the outbox
 * keeps their events until they are delivered), so it has a readiness of its own: `/health/consumer`.
 */
@Injectable()
export class ConsumerReadiness {
  private state: ConsumerState = 'joining';
  private since = new Date();
  private error: string | undefined;

  /** Starts the consumer without holding up the caller; its outcome is recorded here. */
  track(starting: Promise<unknown>): void {
    this.set('joining');
    starting.then(
      () => this.set('ready'),
      (error: unknown) => this.set('failed', error instanceof Error ? error.message : String(error)),
    );
  }

  snapshot(): { state: ConsumerState; since: string; error?: string } {
    return { state: this.state, since: this.since.toISOString(), ...(this.error ? { error: this.error } : {}) };
  }

  private set(state: ConsumerState, error?: string): void {
    this.state = state;
    this.since = new Date();
    this.error = error;
  }
}
