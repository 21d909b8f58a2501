import { OutboxConfigurationError } from '../outbox.errors';
import type { OutboxEventSchema } from './event-schema';
import { SUBJECT_STRATEGIES, type SubjectStrategy } from './subject-names';
import { invalidSchemaRegistryOption, missingRegistryClient } from './schema-registry.messages';

/**
 * The members of a `@confluentinc/schemaregistry` client (`SchemaRegistryClient`, or `MockClient`
 * in tests) the outbox calls itself; the serializers it hands the client to use more.
 */
export interface SchemaRegistryClientLike {
  register(subject: string, schema: { schema: string; schemaType?: string }, normalize?: boolean): Promise<number>;
  getId(subject: string, schema: { schema: string; schemaType?: string }, normalize?: boolean): Promise<number>;
  getLatestSchemaMetadata(subject: string): Promise<{ id?: number; version?: number; schema: string; schemaType?: string }>;
  getCompatibility(subject: string): Promise<string>;
  getDefaultCompatibility(): Promise<string>;
}

/** The `schemaRegistry` option of `OutboxModule`: Kafka messages in the Confluent wire format, with schemas from the code. */
export interface SchemaRegistryOptions {
  /** A client of `@confluentinc/schemaregistry` of yours (`new SchemaRegistryClient(config)`, or `new MockClient(config)` in tests). Excludes `config`. */
  client?: SchemaRegistryClientLike;
  /** The registry client's `ClientConfig` (e.g. `{ baseURLs: ['http://registry:8081'] }`): the module makes the client. Excludes `client`. */
  config?: Record<string, unknown>;
  /** How subjects are named: `'topic'` (`<topic>-value`), `'record'` (the record's full name), `'topic-record'` (`<topic>-<record name>`). Default `'topic'`. */
  subjectStrategy?: SubjectStrategy;
  /** Register a schema the subject does not have yet, at startup. `false`: only look it up (a CI job registers), and refuse to start when it is missing. Default `true`. */
  autoRegister?: boolean;
  /** Schemas of event types, by type, beside (and over) those of `@OutboxEvent({ schema })`. Default: none. */
  events?: Record<string, OutboxEventSchema>;
  /** Where schema file paths are resolved from. Default: the working directory. */
  schemaDir?: string;
}

export interface ResolvedSchemaRegistryOptions {
  client?: SchemaRegistryClientLike;
  config?: Record<string, unknown>;
  subjectStrategy: SubjectStrategy;
  autoRegister: boolean;
  events: Record<string, OutboxEventSchema>;
  schemaDir: string;
}

/** Defaults applied once, and every value checked, where the module is declared. */
export function resolveSchemaRegistryOptions(options: SchemaRegistryOptions): ResolvedSchemaRegistryOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new OutboxConfigurationError(invalidSchemaRegistryOption('', 'an object', options));
  const { client, config } = options;
  if ((client === undefined) === (config === undefined)) throw new OutboxConfigurationError(missingRegistryClient());
  if (client !== undefined && (typeof client !== 'object' || client === null || typeof client.register !== 'function')) {
    throw new OutboxConfigurationError(invalidSchemaRegistryOption('client', 'a client of @confluentinc/schemaregistry (SchemaRegistryClient or MockClient)', client));
  }
  if (config !== undefined && (typeof config !== 'object' || config === null)) throw new OutboxConfigurationError(invalidSchemaRegistryOption('config', "the registry client's ClientConfig object", config));
  const subjectStrategy = options.subjectStrategy ?? 'topic';
  if (!SUBJECT_STRATEGIES.includes(subjectStrategy)) throw new OutboxConfigurationError(invalidSchemaRegistryOption('subjectStrategy', `one of ${SUBJECT_STRATEGIES.map((name) => `'${name}'`).join(', ')}`, subjectStrategy));
  if (options.autoRegister !== undefined && typeof options.autoRegister !== 'boolean') throw new OutboxConfigurationError(invalidSchemaRegistryOption('autoRegister', 'true or false', options.autoRegister));
  const events = options.events ?? {};
  if (typeof events !== 'object' || events === null || Array.isArray(events)) throw new OutboxConfigurationError(invalidSchemaRegistryOption('events', "an object of schemas by event type, e.g. { OrderPlaced: { avro: 'schemas/order-placed.avsc' } }", events));
  if (options.schemaDir !== undefined && typeof options.schemaDir !== 'string') throw new OutboxConfigurationError(invalidSchemaRegistryOption('schemaDir', 'a directory path', options.schemaDir));
  return { client, config, subjectStrategy, autoRegister: options.autoRegister ?? true, events, schemaDir: options.schemaDir ?? process.cwd() };
}
