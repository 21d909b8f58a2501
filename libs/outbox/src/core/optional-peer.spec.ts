import { OutboxConfigurationError } from './outbox.errors';
import { findOptionalPeer, loadOptional, loadOptionalPeers } from './optional-peer';

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

describe('findOptionalPeer', () => {
  it('loads an installed package, from this library or from another file', () => {
    expect(findOptionalPeer<{ Registry: unknown }>('prom-client')?.Registry).toEqual(expect.any(Function));
    expect(findOptionalPeer<{ Registry: unknown }>('prom-client', __filename)?.Registry).toEqual(expect.any(Function));
  });

  it('is undefined for a package that is not installed', () => {
    expect(findOptionalPeer('@nest-outbox/not-installed')).toBeUndefined();
  });
});

describe('loadOptionalPeers', () => {
  it('names every missing package at once', () => {
    expect(() => loadOptionalPeers(['prom-client', '@nest-outbox/a', '@nest-outbox/b'], (absent) => `missing ${absent.join(', ')}`)).toThrow('missing @nest-outbox/a, @nest-outbox/b');
  });
});
