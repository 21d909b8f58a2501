import { TenantRelayFailureTracker } from './tenant-relay-failure';

describe('TenantRelayFailureTracker', () => {
  it('reports the latest claim or settle failure since the first one, until a round completes', () => {
    let now = 1_000;
    const tracker = new TenantRelayFailureTracker(() => now);
    expect(tracker.current()).toBeUndefined();
    tracker.claimFailed('relay', new Error('timed out'));
    now = 2_000;
    tracker.settled({ relayId: 'relay', outcomes: [], leaseLost: { published: 0, failed: 0 }, settleError: 'connection reset' });
    expect(tracker.current()).toEqual({ error: 'connection reset', since: new Date(1_000) });
    tracker.roundEnded({ relayId: 'relay', claimed: 0, ok: false, completed: false });
    expect(tracker.current()?.error).toBe('connection reset');
    tracker.roundEnded({ relayId: 'relay', claimed: 3, ok: false, completed: true });
    expect(tracker.current()).toBeUndefined();
  });

  it('ignores a settled batch that was recorded, whatever its publishes did', () => {
    const tracker = new TenantRelayFailureTracker();
    tracker.settled({ relayId: 'relay', outcomes: [], leaseLost: { published: 0, failed: 0 } });
    expect(tracker.current()).toBeUndefined();
  });
});
