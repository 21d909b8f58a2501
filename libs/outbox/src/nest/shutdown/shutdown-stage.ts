/**
 * A provider whose shutdown hook runs in steps says which step it is in, under this key, so that a
 * shutdown that runs out of time (`enableBoundedShutdown`) can say more than the hook's name.
 * A symbol rather than a method name: it cannot clash with an application's own methods.
 */
export const SHUTDOWN_STAGE = Symbol.for('nest-outbox:shutdown-stage');

export interface ReportsShutdownStage {
  /** The step the shutdown hook now runs, e.g. 'closing transport "kafka"'; undefined outside it. */
  [SHUTDOWN_STAGE](): string | undefined;
}

export function shutdownStageOf(instance: object): string | undefined {
  const report = (instance as Partial<ReportsShutdownStage>)[SHUTDOWN_STAGE];
  return typeof report === 'function' ? report.call(instance) : undefined;
}

/** How long each step of the library's own shutdown hooks may take before the hook moves on without it. */
export const SHUTDOWN_STEP_TIMEOUT_MS = 3_000;
