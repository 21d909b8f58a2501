import { OutboxConfigurationError } from './outbox.errors';
import { loadOptional } from './optional-peer';

describe('loadOptional', () => {
  it('loads an installed package', () => {
    expect(loadOptional<{ Registry: unknown }>('prom-client', 'metrics').Registry).toEqual(expect.any(Function));
  });

  it('names the package and the option when it is missing', () => {
    expect(() => loadOptional('@nest-outbox/not-installed', 'tracing')).toThrow(OutboxConfigurationError);
    expect(() => loadOptional('@nest-outbox/not-installed', 'tracing')).toThrow(
      'OutboxModule option "tracing" needs the package "@nest-outbox/not-installed", which is not installed. Run "npm install @nest-outbox/not-installed", or turn "tracing" off.',
    );
  });
});
