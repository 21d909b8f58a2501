// js-yaml ships no types; only load() is used.
const { load } = require('js-yaml') as { load(text: string): unknown };
import type { OutboxEventMetadata } from '../event-metadata';
import { buildAsyncApiDocument, type AsyncApiInput } from './asyncapi-document';
import { resolveAsyncApiOptions } from './asyncapi-options';
import { destinationsOfEvent } from './event-destinations';
import { toYaml } from './to-yaml';

const event = (type: string, extra: Partial<OutboxEventMetadata> = {}) => ({ eventClass: class Named {}, metadata: { type, version: 1, ...extra } });
const plain = () => ({ schema: { type: 'object' }, referenced: {} });
const input = (overrides: Partial<AsyncApiInput>): AsyncApiInput => ({
  info: { title: 't', version: '1' },
  settings: { routes: [] },
  events: [],
  aggregates: [],
  payloadSchemaOf: plain,
  ...overrides,
});

describe('where the document places an event, by the rule the writer applies', () => {
  const settings = { defaultTopic: 'fallback', routes: [] };

  it('its own topic first, then resolveTopic, then its aggregate\'s topic, then defaultTopic', () => {
    expect(destinationsOfEvent({ type: 'a', version: 1, topic: 'own' }, [{ aggregateType: 'x', topic: 'agg' }], settings).destinations).toEqual([{ transport: 'default', destination: 'own' }]);
    expect(destinationsOfEvent({ type: 'a', version: 1 }, [{ aggregateType: 'x', topic: 'agg' }], { ...settings, resolveTopic: () => 'resolved' }).destinations).toEqual([{ transport: 'default', destination: 'resolved' }]);
    expect(destinationsOfEvent({ type: 'a', version: 1 }, [{ aggregateType: 'x', topic: 'agg' }], settings).destinations).toEqual([{ transport: 'default', destination: 'agg' }]);
    expect(destinationsOfEvent({ type: 'a', version: 1 }, [], settings).destinations).toEqual([{ transport: 'default', destination: 'fallback' }]);
  });

  it('a resolveTopic that throws without a payload leaves the next rule to decide', () => {
    const resolveTopic = (draft: { payload: unknown }) => (draft.payload as { region: string }).region;
    expect(destinationsOfEvent({ type: 'a', version: 1 }, [], { ...settings, resolveTopic }).destinations).toEqual([{ transport: 'default', destination: 'fallback' }]);
  });

  it('with aggregates of different topics, the event is on each, and says the recording aggregate decides', () => {
    const found = destinationsOfEvent({ type: 'a', version: 1 }, [{ aggregateType: 'x', topic: 'xs' }, { aggregateType: 'y' }], settings);
    expect(found.destinations.map((d) => d.destination)).toEqual(['xs', 'fallback']);
    expect(found.byAggregate).toEqual(['xs', 'fallback']);
  });

  it('adds the routes matching its type, its aggregates, or everything', () => {
    const routes = [
      { events: ['a'], transport: 'audit', topic: 'audit.a' },
      { aggregates: ['x'], transport: 'audit', topic: 'audit.x' },
      { events: ['b'], transport: 'audit', topic: 'audit.b' },
      { transport: 'lake', topic: 'all' },
    ];
    const found = destinationsOfEvent({ type: 'a', version: 1 }, [{ aggregateType: 'x' }], { ...settings, routes });
    expect(found.destinations.map((d) => `${d.transport}:${d.destination}`)).toEqual(['default:fallback', 'audit:audit.a', 'audit:audit.x', 'lake:all']);
  });
});

describe('buildAsyncApiDocument', () => {
  it('lists an event without any destination in components only, saying why', () => {
    const doc = buildAsyncApiDocument(input({ events: [event('lost.thing')] }));
    expect(doc.channels).toEqual({});
    expect(doc.operations).toEqual({});
    expect(doc.components.messages['lost.thing.v1'].description).toMatch(/No destination of "lost\.thing" is known before it is written/);
  });

  it('gives channels ids a $ref can hold, unique even when two destinations read alike', () => {
    const doc = buildAsyncApiDocument(input({ events: [event('a', { topic: 'orders/eu' }), event('b', { topic: 'orders_eu' })] }));
    expect(Object.fromEntries(Object.entries(doc.channels).map(([id, channel]) => [id, channel.address]))).toEqual({ orders_eu: 'orders/eu', 'orders_eu-2': 'orders_eu' });
  });

  it('says when no event class was declared', () => {
    expect(buildAsyncApiDocument(input({})).info.description).toMatch(/^No event class was declared with @OutboxEvent\(\)/);
  });
});

describe('asyncApi option', () => {
  it('refuses what cannot be a title or a server list, naming the option', () => {
    expect(() => resolveAsyncApiOptions({ title: '' })).toThrow('OutboxModule option "asyncApi.title" must be a non-empty string, got "".');
    expect(() => resolveAsyncApiOptions({ servers: ['kafka:9092'] as never })).toThrow(/"asyncApi\.servers" must be an object of AsyncAPI Server Objects by name/);
  });

  it('takes title and version from the nearest package.json when not given', () => {
    expect(resolveAsyncApiOptions(undefined, __dirname).info).toMatchObject({ title: '@nest-outbox/outbox', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    expect(resolveAsyncApiOptions({ title: 'mine' }, __dirname).info.title).toBe('mine');
  });
});

describe('toYaml', () => {
  it('writes YAML that reads back as the same data, strings with quotes, colons and new lines included', () => {
    const value = { a: 1, 'b: c': 'x: "y"\n- z', list: [1, { d: [[1, 2], { e: null }], f: {} }, []], empty: {}, yes: true, nested: [{ a: 1, b: { c: 2 } }] };
    expect(load(toYaml(value))).toEqual(value);
  });
});
