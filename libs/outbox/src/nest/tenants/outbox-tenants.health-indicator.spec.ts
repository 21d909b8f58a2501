import type { OutboxTenants } from './outbox-tenants';
import { OutboxTenantsHealthIndicator } from './outbox-tenants.health-indicator';

describe('OutboxTenantsHealthIndicator', () => {
  const failingFor = (ms: number) => ({ id: 'b', state: 'failing' as const, error: 'connect ECONNREFUSED', failingSince: new Date(Date.now() - ms) });
  const indicatorOver = (status: ReturnType<OutboxTenants['status']>) => new OutboxTenantsHealthIndicator({ status: () => status } as unknown as OutboxTenants);

  it('is up while failures are younger than maxFailingMs (default 60 s), listing them, and down past it', async () => {
    // Failing for 30 s when made; the checks run a moment later (the first loads @nestjs/terminus).
    const indicator = indicatorOver([{ id: 'a', state: 'open' }, failingFor(30_000)]);
    const up = await indicator.isHealthy();
    expect(up).toMatchObject({ tenants: { status: 'up', open: 1, failing: [{ id: 'b', state: 'failing', error: 'connect ECONNREFUSED' }] } });
    expect(up.tenants.failing[0].failingForSeconds).toBeGreaterThanOrEqual(30);
    expect(up.tenants.failing[0].failingForSeconds).toBeLessThan(60);
    expect(await indicator.isHealthy('tenant-dbs', { maxFailingMs: 10_000 })).toMatchObject({
      'tenant-dbs': { status: 'down', reason: expect.stringMatching(/^tenant "b" could not be opened for [3-5]\d(\.\d)? s \(over maxFailingMs, 10 s\): connect ECONNREFUSED$/) },
    });
  });

  it('refuses a maxFailingMs that is not a number of milliseconds, naming it', async () => {
    const indicator = indicatorOver([]);
    await expect(indicator.isHealthy('tenants', { maxFailingMs: -1 })).rejects.toThrow('maxFailingMs must be a number of milliseconds ≥ 0, got -1');
    await expect(indicator.isHealthy('tenants', { maxFailingMs: Number.NaN })).rejects.toThrow('got NaN');
  });
});
