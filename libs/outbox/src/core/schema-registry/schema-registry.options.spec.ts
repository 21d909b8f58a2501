import { resolveSchemaRegistryOptions } from './schema-registry.options';

const client = { register: async () => 1, getId: async () => 1, getLatestSchemaMetadata: async () => ({ schema: '' }), getCompatibility: async () => 'BACKWARD', getDefaultCompatibility: async () => 'BACKWARD' };

describe('schemaRegistry options', () => {
  it('applies the defaults once', () => {
    expect(resolveSchemaRegistryOptions({ client })).toEqual({ client, config: undefined, subjectStrategy: 'topic', autoRegister: true, events: {}, schemaDir: process.cwd() });
  });

  it('refuses each bad value naming the option', () => {
    expect(() => resolveSchemaRegistryOptions({})).toThrow('needs "client"');
    expect(() => resolveSchemaRegistryOptions({ client, config: { baseURLs: [] } })).toThrow('not both');
    expect(() => resolveSchemaRegistryOptions({ client: {} as never })).toThrow('"schemaRegistry.client" must be a client of @confluentinc/schemaregistry');
    expect(() => resolveSchemaRegistryOptions({ client, subjectStrategy: 'TopicNameStrategy' as never })).toThrow(`"schemaRegistry.subjectStrategy" must be one of 'topic', 'record', 'topic-record'; got "TopicNameStrategy"`);
    expect(() => resolveSchemaRegistryOptions({ client, autoRegister: 'yes' as never })).toThrow('"schemaRegistry.autoRegister" must be true or false');
    expect(() => resolveSchemaRegistryOptions({ client, events: [] as never })).toThrow('"schemaRegistry.events" must be an object of schemas by event type');
    expect(() => resolveSchemaRegistryOptions(null as never)).toThrow('OutboxModule option "schemaRegistry" must be an object');
  });
});
