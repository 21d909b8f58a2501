import { decodeBatch } from './row-decoding';
import type { ClaimedMessage } from './outbox-message';

const claimed = (attempt: number, errorHistory?: string | null): ClaimedMessage => ({
  position: '42',
  id: '00000000-0000-7000-8000-000000000042',
  type: 'orders.order-placed',
  version: 1,
  aggregateType: 'order',
  aggregateId: 'o-1',
  transport: 'default',
  destination: 'orders',
  occurredAt: '2026-11-26T07:00:00.000Z',
  headers: {},
  payloadJson: '{}',
  attempt,
  errorHistory,
});

const history = (...errors: string[]) => JSON.stringify(errors.map((error, i) => ({ at: `2026-11-26T07:0${i}:00Z`, error })));
const reasonOf = (message: ClaimedMessage, maxAttempts: number) => decodeBatch([message], maxAttempts).undecodable.get('42');

describe('the reason of a row claimed over maxAttempts', () => {
  it('says it failed N times with errors recorded, and that the limit was lowered, when its history holds that many failures', () => {
    const failures = Array.from({ length: 7 }, (_, i) => `broker refused (${i + 1})`);
    const reason = reasonOf(claimed(8, history(...failures)), 5);
    expect(reason).toBe(
      'Outbox row 42 failed 7 time(s) with the error recorded (the last: "broker refused (7)"); this claim would be attempt 8, over "maxAttempts" (5), ' +
        'which is lower than when those failures were recorded. It is dead-lettered without another attempt; fix the cause in its error history, then requeue it (fresh attempts) or discard it.',
    );
    expect(reason).not.toMatch(/without an outcome/);
  });

  it('counts the claims that ended without an outcome beside the recorded failures', () => {
    const reason = reasonOf(claimed(5, history('timeout', 'timeout')), 3);
    expect(reason).toMatch(/^Outbox row 42 failed 2 time\(s\) with the error recorded \(the last: "timeout"\) and was claimed 2 more time\(s\) without an outcome \(a crash, a stall or a lost lease\); this claim would be attempt 5, over "maxAttempts" \(3\)\. /);
    expect(reason).not.toMatch(/lower than when/);
  });

  it('says "at least" when the history is full (it keeps the latest 20)', () => {
    const reason = reasonOf(claimed(31, history(...Array.from({ length: 20 }, () => 'nope'))), 10);
    expect(reason).toMatch(/failed at least 20 time\(s\) with the error recorded .*; this claim would be attempt 31/);
    expect(reason).not.toMatch(/more time\(s\) without an outcome/);
  });

  it('says it was claimed without an outcome when no failure was recorded (or the history cannot be read)', () => {
    for (const errorHistory of [undefined, null, '[]', 'not json']) {
      expect(reasonOf(claimed(4, errorHistory), 3)).toMatch(/^Outbox row 42 was claimed 4 times, over "maxAttempts" \(3\), without an outcome: /);
    }
  });

  it('decodes a row at or under the limit as usual, whatever its history', () => {
    const batch = decodeBatch([claimed(3, history('a', 'b'))], 3);
    expect(batch.undecodable.size).toBe(0);
    expect(batch.decoded.get('42')?.destination).toBe('orders');
  });
});
