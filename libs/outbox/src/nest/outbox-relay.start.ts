import type { HttpAdapterHost } from '@nestjs/core';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { invalidOption, relayStartWithoutHttpServer } from '../core/outbox.messages';

/** When the relay starts claiming; see `OutboxModuleOptions.relayStart`. */
export type OutboxRelayStart = 'bootstrap' | 'listen' | 'manual';

const MODES: readonly OutboxRelayStart[] = ['bootstrap', 'listen', 'manual'];

/**
 * Holds the relay back until the application can receive what it publishes. Nest runs
 * `onApplicationBootstrap` before `app.listen()` binds its port and before
 * `app.startAllMicroservices()`, so a relay that publishes to a listener of its own app (TCP to
 * itself) would be refused at every start and charge its pending rows an attempt.
 */
export class OutboxRelayStartGate {
  private started = false;
  private requested = false;
  private armed = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    readonly mode: OutboxRelayStart,
    private readonly adapterHost: HttpAdapterHost,
    private readonly start: () => void,
  ) {}

  /** At module init: a mode that cannot work in this application fails the start, naming the option. */
  static resolve(mode: unknown): OutboxRelayStart {
    if (mode === undefined) return 'bootstrap';
    if (!MODES.includes(mode as OutboxRelayStart)) throw new OutboxConfigurationError(invalidOption('relayStart', `one of ${MODES.map((m) => `'${m}'`).join(', ')}`, mode));
    return mode as OutboxRelayStart;
  }

  check(): void {
    if (this.mode === 'listen' && !this.adapterHost.httpAdapter) throw new OutboxConfigurationError(relayStartWithoutHttpServer());
  }

  /** At bootstrap: starts now, or says what it waits for (for the startup log). */
  arm(): string {
    this.armed = true;
    if (this.mode === 'bootstrap' || this.requested) return this.go(), 'started at bootstrap';
    if (this.mode === 'manual') return "waiting for OutboxRelayHost.start() (relayStart: 'manual'); nothing is published until then";
    if (this.adapterHost.listening) return this.go(), 'started: the HTTP server listens';
    const subscription = this.adapterHost.listen$.subscribe({ complete: () => this.go() });
    this.unsubscribe = () => subscription.unsubscribe();
    return "waiting for the HTTP server to listen (relayStart: 'listen')";
  }

  /** `OutboxRelayHost.start()`: at once after bootstrap, else as soon as bootstrap comes. */
  request(): void {
    this.requested = true;
    if (this.armed) this.go();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.armed = false;
  }

  private go(): void {
    if (this.started || !this.armed) return;
    this.started = true;
    this.unsubscribe?.();
    this.start();
  }
}
