import { Logger, type INestApplicationContext, type LoggerService } from '@nestjs/common';
import { errorText } from '../../core/error-text';
import { OutboxConfigurationError } from '../../core/outbox.errors';
import { shutdownDeadlinePassed, shutdownFailed, shutdownFinished, shutdownGaveUp, shutdownSecondSignal, shutdownNotTracked, shutdownStarted, shutdownTimeoutInvalid } from './shutdown.messages';
import { ShutdownStepsTracker } from './shutdown-steps.tracker';

export interface BoundedShutdownOptions {
  /**
   * How long `app.close()` may take after a signal. Past it the process logs what the close was
   * still waiting for (a lifecycle hook, the HTTP server, a microservice) and exits with code 1.
   * Keep it below your orchestrator's grace period (`docker stop` waits 10 s, Kubernetes 30 s by
   * default) so that the log is written before SIGKILL. Default `10000`.
   */
  timeoutMs?: number;
  /** The signals that start the close. A second one while closing exits at once (code 1). Default `['SIGTERM', 'SIGINT']`. */
  signals?: NodeJS.Signals[];
  /** Where the start, the outcome and what was given up on are logged. Default: Nest's `Logger` (context `Shutdown`). */
  logger?: LoggerService;
  /** Ends the process; a test can pass its own. Default `process.exit`. */
  exit?: (code: number) => void;
}

export const BOUNDED_SHUTDOWN_DEFAULTS = { timeoutMs: 10_000, signals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[] };

/**
 * Use instead of `app.enableShutdownHooks()` (not together with it): on SIGTERM or SIGINT, closes
 * the app (every shutdown hook runs: the outbox relay drains and hands back its leases) and exits
 * with code 0, or, if the close has not finished within `timeoutMs` (a broker or database that
 * does not answer keeps Nest's close waiting forever), logs which hook, server or microservice it
 * was still waiting for and exits with code 1. Returns a function that removes the signal handlers.
 */
export function enableBoundedShutdown(app: INestApplicationContext, options: BoundedShutdownOptions = {}): () => void {
  const timeoutMs = options.timeoutMs ?? BOUNDED_SHUTDOWN_DEFAULTS.timeoutMs;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw new OutboxConfigurationError(shutdownTimeoutInvalid(timeoutMs));
  }
  const signals = options.signals ?? BOUNDED_SHUTDOWN_DEFAULTS.signals;
  const logger = options.logger ?? new Logger('Shutdown');
  const exitProcess = options.exit ?? ((code: number) => process.exit(code));
  let exited = false;
  // Once: a close that settles after the deadline (or a second signal) must not end the process a second time.
  const exit = (code: number) => {
    if (exited) return;
    exited = true;
    exitProcess(code);
  };
  const tracker = new ShutdownStepsTracker();
  let closing: string | undefined;
  let deadline: NodeJS.Timeout | undefined;

  const giveUp = (reason: string) => {
    clearTimeout(deadline);
    logger.error(shutdownGaveUp(reason, tracker.pending()));
    exit(1);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return giveUp(shutdownSecondSignal(closing, signal));
    closing = signal;
    const started = Date.now();
    logger.log(shutdownStarted(signal, timeoutMs));
    try {
      tracker.track(app);
    } catch (error) {
      // Knowing what runs is a help; it must never keep the close itself from starting.
      logger.warn?.(shutdownNotTracked(errorText(error)));
    }
    // Not unref'd: this timer is what ends a close that would otherwise wait forever.
    deadline = setTimeout(() => giveUp(shutdownDeadlinePassed(signal, timeoutMs)), timeoutMs);
    app.close().then(
      () => {
        clearTimeout(deadline);
        logger.log(shutdownFinished(signal, Date.now() - started));
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        logger.error(shutdownFailed(signal, errorText(error)));
        exit(1);
      },
    );
  };

  for (const signal of signals) process.on(signal, onSignal);
  return () => {
    for (const signal of signals) process.off(signal, onSignal);
  };
}
