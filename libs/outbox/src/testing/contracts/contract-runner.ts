/**
 * The two functions of a test runner the contract suites need. jest, vitest and mocha offer them
 * as globals; node:test exports them (`import { describe, it } from 'node:test'`). Each test
 * builds and closes its own subject in `try … finally`, so no hooks are needed.
 */
export interface ContractRunner {
  describe(name: string, body: () => void): unknown;
  it: ContractTest;
}

export interface ContractTest {
  (name: string, body: () => Promise<void>): unknown;
  /** Used, when present, for a case the subject declares out of reach (the reason is in the title). */
  skip?: (name: string, body: () => Promise<void>) => unknown;
}

/** The runner passed in, or the globals of jest, vitest (with `globals: true`) and mocha. */
export function resolveRunner(runner: Partial<ContractRunner> | undefined, suite: string): ContractRunner {
  const globals = globalThis as unknown as Partial<ContractRunner>;
  const describe = runner?.describe ?? globals.describe;
  const it = runner?.it ?? globals.it;
  if (typeof describe !== 'function' || typeof it !== 'function') {
    throw new Error(
      `${suite}: no describe/it found. Pass them as the second argument, e.g. ` +
        `${suite}(subject, { describe, it }) with describe and it imported from 'node:test' or 'vitest'.`,
    );
  }
  return { describe, it };
}

/** Registers a case the subject cannot run, so that it shows in the report instead of vanishing. */
export function registerNotChecked(it: ContractTest, name: string, reason: string): void {
  const title = `${name} — not checked: ${reason}`;
  if (it.skip) it.skip(title, async () => undefined);
  else it(title, async () => undefined);
}

/**
 * Polls `probe` until it returns something other than `undefined`/`false`, or throws after
 * `timeoutMs` naming `what`. Stores compute lease and retry times with their own clock (the
 * database's), so the suites wait for a time to come instead of moving a fake clock.
 */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
  throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}

/**
 * Watches `count` for `graceMs` after what a test awaited has arrived, and throws as soon as it
 * passes `max`: a copy sent again (a retry, a redelivery) arrives after the first one, so a count
 * taken at the instant the awaited messages are in would miss it. Returns the last count.
 */
export async function staysAtMost(what: string, count: () => Promise<number> | number, max: number, graceMs: number, everyMs = 20): Promise<number> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const value = await count();
    if (value > max) throw new Error(`${what}: ${value}, more than the ${max} allowed (watched for ${graceMs} ms after the awaited messages arrived)`);
    if (Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
