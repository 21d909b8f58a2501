import { FIRST_SUMMARY_AFTER_MS, TenantRelayLog } from './tenant-relay.log';

describe('TenantRelayLog', () => {
  const round = (completed: boolean) => ({ relayId: 'relay/acme', claimed: 0, ok: completed, completed });

  function subject() {
    let now = 0;
    const lines: Array<{ level: string; message: string; stack?: string }> = [];
    const log = new TenantRelayLog(
      {
        log: (message) => lines.push({ level: 'log', message }),
        warn: (message) => lines.push({ level: 'warn', message }),
        error: (message, stack) => lines.push({ level: 'error', message, stack }),
      },
      'Outbox of tenant "acme" (outbox_messages)',
      () => now,
    );
    return { log, lines, advance: (ms: number) => (now += ms) };
  }

  it('logs the first failure with its stack, counts the same failure again, and summarizes it with a growing interval', () => {
    const { log, lines, advance } = subject();
    log.error('Outbox claim failed; will retry at the next poll: connect ECONNREFUSED', 'Error: connect ECONNREFUSED\n    at …');
    for (let poll = 0; poll < 10; poll++) {
      advance(1_000);
      log.error('Outbox claim failed; will retry at the next poll: connect ECONNREFUSED', 'Error: connect ECONNREFUSED\n    at …');
      log.roundEnded(round(false));
    }
    expect(lines).toEqual([{ level: 'error', message: 'Outbox of tenant "acme" (outbox_messages): Outbox claim failed; will retry at the next poll: connect ECONNREFUSED', stack: 'Error: connect ECONNREFUSED\n    at …' }]);

    advance(FIRST_SUMMARY_AFTER_MS);
    log.error('Outbox claim failed; will retry at the next poll: connect ECONNREFUSED', 'stack');
    expect(lines[1]).toEqual({ level: 'warn', message: expect.stringMatching(/^Outbox of tenant "acme" \(outbox_messages\): the relay still fails: 11 more time\(s\) .* since 1970-01-01T00:00:00\.000Z \(Outbox claim failed; .*ECONNREFUSED\)/) });
    // The next summary waits twice as long.
    advance(FIRST_SUMMARY_AFTER_MS);
    log.error('Outbox claim failed; will retry at the next poll: connect ECONNREFUSED', 'stack');
    expect(lines).toHaveLength(2);
    advance(FIRST_SUMMARY_AFTER_MS);
    log.error('Outbox claim failed; will retry at the next poll: connect ECONNREFUSED', 'stack');
    expect(lines).toHaveLength(3);
  });

  it('logs a changed failure without its stack, and one line when a round completes again', () => {
    const { log, lines, advance } = subject();
    log.error('claim failed: connect ECONNREFUSED', 'stack 1');
    advance(2_000);
    log.error('claim failed: statement timed out', 'stack 2');
    log.roundEnded(round(false));
    advance(500);
    log.roundEnded(round(true));
    log.roundEnded(round(true));
    expect(lines).toEqual([
      { level: 'error', message: 'Outbox of tenant "acme" (outbox_messages): claim failed: connect ECONNREFUSED', stack: 'stack 1' },
      { level: 'error', message: 'Outbox of tenant "acme" (outbox_messages): claim failed: statement timed out', stack: undefined },
      { level: 'log', message: 'Outbox of tenant "acme" (outbox_messages): the relay completes its rounds again, after 2.5 s and 2 failure(s).' },
    ]);
    // A failure after the recovery is a new one: in full again.
    log.error('claim failed: connect ECONNREFUSED', 'stack 3');
    expect(lines[3]).toMatchObject({ level: 'error', stack: 'stack 3' });
  });

  it('passes lines without a stack (rows gone dead, a broker failing) through, naming the tenant', () => {
    const { log, lines } = subject();
    for (let i = 0; i < 2; i++) log.error('Outbox relay r: 1 of 1 message(s) to "orders" failed (0 will be retried, 1 now dead; attempt 5): refused');
    log.warn('a warning');
    expect(lines.map((line) => `${line.level} ${line.message}`)).toEqual([
      'error Outbox of tenant "acme" (outbox_messages): Outbox relay r: 1 of 1 message(s) to "orders" failed (0 will be retried, 1 now dead; attempt 5): refused',
      'error Outbox of tenant "acme" (outbox_messages): Outbox relay r: 1 of 1 message(s) to "orders" failed (0 will be retried, 1 now dead; attempt 5): refused',
      'warn Outbox of tenant "acme" (outbox_messages): a warning',
    ]);
  });
});
