import { OutboxConfigurationError } from '../../core/outbox.errors';
import { resolveTenantsOptions } from './outbox-tenants.checks';
import type { OutboxTenantsModuleOptions } from './outbox-tenants.options';

const base: OutboxTenantsModuleOptions = { tenants: () => [], transport: 'KAFKA' };
const resolve = (options: Partial<OutboxTenantsModuleOptions>) => resolveTenantsOptions({ ...base, ...options }, () => 'relay-1');

describe('OutboxTenantsModule queryTimeoutMs', () => {
  it('bounds each statement on a tenant\'s database at 10 s unless set', () => {
    expect(resolve({}).queryTimeoutMs).toBe(10_000);
    expect(resolve({ queryTimeoutMs: 500 }).queryTimeoutMs).toBe(500);
  });

  it.each([50, 300_001, 1.5, '1000'])('refuses %p, naming the option and its range', (value) => {
    expect(() => resolve({ queryTimeoutMs: value as number })).toThrow(OutboxConfigurationError);
    expect(() => resolve({ queryTimeoutMs: value as number })).toThrow(/OutboxTenantsModule.*"queryTimeoutMs".*an integer from 100 to 300000/);
  });
});

describe('OutboxTenantsModule metrics', () => {
  it('is off unless set, and takes OutboxModule\'s metrics options', () => {
    expect(resolve({}).metrics).toBeUndefined();
    expect(resolve({ metrics: { prefix: 'app_outbox_' } }).metrics).toMatchObject({ prefix: 'app_outbox_' });
  });

  it('refuses a bad metrics option, naming it and this module', () => {
    expect(() => resolve({ metrics: { prefix: '1-bad' } })).toThrow(/^Invalid OutboxTenantsModule option "metrics.prefix": expected letters, digits and _/);
    expect(() => resolve({ metrics: { registy: {} } as never })).toThrow(/OutboxTenantsModule.*registy/);
  });
});
