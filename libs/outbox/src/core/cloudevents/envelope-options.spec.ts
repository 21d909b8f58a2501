import { OutboxConfigurationError } from '../outbox.errors';
import { cloudEventsDestinations, formatOf, resolveEnvelopeOptions, type EnvelopeOptions } from './envelope-options';

describe('the envelope option', () => {
  it('defaults to the outbox envelope everywhere, with no source and nothing asking for the SDK', () => {
    const resolved = resolveEnvelopeOptions(undefined);
    expect(resolved).toEqual({ format: 'outbox', headers: 'all', destinations: {} });
    expect(formatOf(resolved, 'orders')).toBe('outbox');
    expect(cloudEventsDestinations(resolved)).toEqual([]);
  });

  it('takes envelope.headers among all, id-and-type and none, and refuses another value naming the choices', () => {
    expect(resolveEnvelopeOptions({ headers: 'none' }).headers).toBe('none');
    expect(resolveEnvelopeOptions({ headers: 'id-and-type' }).headers).toBe('id-and-type');
    expect(() => resolveEnvelopeOptions({ headers: 'some' as never })).toThrow(/envelope\.headers.*'all', 'id-and-type', 'none'.*some/s);
  });

  it('picks a destination\'s own format over the module-wide one', () => {
    const resolved = resolveEnvelopeOptions({ format: 'cloudevents-structured', source: '/shop/orders', destinations: { legacy: 'outbox', 'orders.ce': 'cloudevents-binary' } });
    expect(formatOf(resolved, 'orders.ce')).toBe('cloudevents-binary');
    expect(formatOf(resolved, 'legacy')).toBe('outbox');
    expect(formatOf(resolved, 'anything-else')).toBe('cloudevents-structured');
    expect(cloudEventsDestinations(resolved)).toEqual(['envelope.format', 'envelope.destinations["orders.ce"]']);
  });

  it.each([
    ['an unknown format', { format: 'cloudevent' }, /"envelope.format": expected 'outbox', 'cloudevents-binary', 'cloudevents-structured', got "cloudevent"/],
    ['an unknown destination format', { source: '/a', destinations: { orders: 'binary' } }, /"envelope.destinations\["orders"\]": expected 'outbox'.*got "binary"/],
    ['destinations as an array', { destinations: ['orders'] }, /"envelope.destinations": expected an object of formats by destination/],
    ['a blank destination name', { destinations: { ' ': 'outbox' } }, /"envelope.destinations\[" "\]": expected a key that is a destination name/],
    ['not an object', 'cloudevents', /"envelope": expected an object/],
  ])('refuses %s, naming the option', (_case, options, message) => {
    expect(() => resolveEnvelopeOptions(options as EnvelopeOptions)).toThrow(OutboxConfigurationError);
    expect(() => resolveEnvelopeOptions(options as EnvelopeOptions)).toThrow(message);
  });

  it('refuses CloudEvents without a source, naming where they were asked for', () => {
    expect(() => resolveEnvelopeOptions({ destinations: { 'orders.ce': 'cloudevents-binary' } })).toThrow(
      /"envelope.source" is required: envelope.destinations\["orders.ce"\] ask for CloudEvents.*envelope: \{ source: '\/shop\/orders'/,
    );
  });

  it.each(['/shop/orders', 'urn:shop:orders', 'https://shop.example/orders?region=eu', 'orders', 'a%20b'])('accepts the URI-reference %s as source', (source) => {
    expect(resolveEnvelopeOptions({ format: 'cloudevents-structured', source }).source).toBe(source);
  });

  it.each([['', 'empty'], ['shop orders', 'a space'], ['/shöp', 'non-ASCII'], ['1x:orders', 'a colon after no scheme'], ['a%2', 'a cut percent-encoding'], [42, 'a number']])(
    'refuses the source %j (%s)',
    (source: unknown, _why: string) => {
      expect(() => resolveEnvelopeOptions({ format: 'cloudevents-binary', source: source as string })).toThrow(/"envelope.source": expected a URI-reference/);
    },
  );
});
