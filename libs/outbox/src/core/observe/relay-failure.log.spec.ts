import type { ClaimedMessage } from '../outbox-message';
import { RelayFailureLog } from './relay-failure.log';

const message = (position: number, destination = 'orders', attempt = 1): ClaimedMessage => ({
  position: String(position), id: `id-${position}`, type: 't', version: 1, aggregateType: 'a', aggregateId: `${position}`,
  transport: 'default', destination, occurredAt: new Date(0).toISOString(), headers: {}, payloadJson: '{}', attempt,
});

describe('RelayFailureLog', () => {
  it('logs one line per failed batch and destination with counts and the error, and one line on recovery', () => {
    const lines: string[] = [];
    let now = 0;
    const log = new RelayFailureLog({ log: (m) => lines.push(`LOG ${m}`), warn: (m) => lines.push(`WARN ${m}`), error: (m) => lines.push(`ERROR ${m}`) }, () => now);
    const failed = (positions: number[], destination: string, retryInMs: number | null) =>
      positions.map((p) => ({ message: message(p, destination, 3), error: 'ECONNREFUSED', retryInMs, durationMs: 1 }));

    log.settled({ relayId: 'r', leaseLost: { published: 0, failed: 0 }, outcomes: [...failed([1, 2, 3], 'orders', 500), ...failed([4], 'audit', null)] });
    now = 8_000;
    log.settled({ relayId: 'r', leaseLost: { published: 0, failed: 0 }, outcomes: failed([1, 2, 3], 'orders', 1_000) });
    log.settled({ relayId: 'r', leaseLost: { published: 0, failed: 0 }, outcomes: [1, 2, 3].map((p) => ({ message: message(p), durationMs: 1 })) });
    log.settled({ relayId: 'r', leaseLost: { published: 0, failed: 0 }, outcomes: [{ message: message(9), durationMs: 1 }] });

    expect(lines).toEqual([
      'WARN Outbox relay r: 3 of 3 message(s) to "orders" failed (will be retried; attempt 3): ECONNREFUSED',
      'ERROR Outbox relay r: 1 of 1 message(s) to "audit" failed (0 will be retried, 1 now dead; attempt 3): ECONNREFUSED',
      'WARN Outbox relay r: 3 of 3 message(s) to "orders" failed (will be retried; attempt 3): ECONNREFUSED',
      'LOG Outbox: publishing to "orders" recovered after 8.0 s (6 failed attempt(s) meanwhile).',
    ]);
  });
});
