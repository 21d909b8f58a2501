import { judgeTenants } from './tenants.health';

describe('judgeTenants', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  const ago = (ms: number) => new Date(now - ms);

  it('is healthy when every tenant is open and relaying', () => {
    expect(judgeTenants([{ id: 'a', state: 'open' }, { id: 'b', state: 'open' }], 60_000, now)).toEqual({ healthy: true, reasons: [], details: { open: 2, failing: [] } });
  });

  it('lists a recent failure in the details only, and is down once a tenant fails for longer than maxFailingMs, naming it, what fails and since when', () => {
    const tenants = [
      { id: 'a', state: 'open' as const, error: 'a statement on its database exceeded queryTimeoutMs (10000 ms)', failingSince: ago(5_000) },
      { id: 'b', state: 'failing' as const, error: 'connect ECONNREFUSED 127.0.0.1:5999', failingSince: ago(90_000) },
      { id: 'c', state: 'failing' as const },
    ];
    const verdict = judgeTenants(tenants, 60_000, now);
    expect(verdict.healthy).toBe(false);
    expect(verdict.reasons).toEqual(['tenant "b" could not be opened for 90 s (over maxFailingMs, 60 s): connect ECONNREFUSED 127.0.0.1:5999']);
    expect(verdict.details).toEqual({
      open: 1,
      failing: [
        { id: 'a', state: 'open', error: tenants[0].error, failingForSeconds: 5 },
        { id: 'b', state: 'failing', error: tenants[1].error, failingForSeconds: 90 },
      ],
    });
    expect(judgeTenants(tenants, 0, now).reasons[0]).toBe(
      'tenant "a" has had its relay failing for 5 s (over maxFailingMs, 0 s): a statement on its database exceeded queryTimeoutMs (10000 ms)',
    );
  });
});
