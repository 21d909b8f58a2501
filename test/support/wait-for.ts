import { waitUntil } from '../../libs/outbox/src/testing/contracts/contract-runner';

/** Polls `probe` until it returns a value other than undefined/false, or fails after `timeoutMs` with `what`. */
export function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 15_000): Promise<T> {
  return waitUntil(what, probe, timeoutMs, 25);
}
