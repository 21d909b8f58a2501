/** What enableBoundedShutdown and the library's shutdown hooks log. */

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const shutdownStarted = (signal: string, timeoutMs: number) =>
  `${signal} received: closing the application (it exits with code 1 if the close takes more than ${timeoutMs} ms).`;

export const shutdownFinished = (signal: string, elapsedMs: number) => `Closed in ${elapsedMs} ms after ${signal}; exiting with code 0.`;

export const shutdownFailed = (signal: string, error: string) => `Closing the application after ${signal} failed: ${error}; exiting with code 1.`;

export const shutdownGaveUp = (reason: string, pending: ReadonlyArray<{ step: string; runningMs: number }>) =>
  `${reason}; exiting with code 1. ` +
  (pending.length > 0
    ? `Gave up on: ${pending.map(({ step, runningMs }) => `${step} (running ${seconds(runningMs)})`).join('; ')}.`
    : `Gave up on the close: it did not finish, and none of its lifecycle hooks, servers or microservices is still running ` +
      `(it waits on something else).`);

export const shutdownDeadlinePassed = (signal: string, timeoutMs: number) => `The close did not finish within ${timeoutMs} ms of ${signal}`;

export const shutdownSecondSignal = (first: string, second: string) => `${second} received while closing after ${first}`;

export const shutdownStepTimedOut = (step: string, ms: number) => `Shutdown: ${step} did not finish within ${ms} ms; going on without it.`;

export const shutdownTimeoutInvalid = (got: unknown) =>
  `enableBoundedShutdown option "timeoutMs" must be a positive integer of milliseconds (default 10000), got ${String(got)}.`;

export const shutdownNotTracked = (error: string) => `Closing without knowing which step runs (${error}): past the deadline the log cannot name what it gave up on.`;
