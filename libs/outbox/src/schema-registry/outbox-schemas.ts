import { declaredEvents, eventClassOf, getOutboxEventMetadata, type OutboxEventMetadata, type OutboxEventSchema } from '../core/event-metadata';
import { OutboxConfigurationError, OutboxNonRetryableError, OutboxWriteError } from '../core/outbox.errors';
import type { OutgoingMessage } from '../core/outbox-message';
import { loadEventSchema, registrySchemaText, REGISTRY_SCHEMA_TYPE, type LoadedEventSchema } from '../core/schema-registry/event-schema';
import { compilePayloadCheck, type PayloadCheck } from '../core/schema-registry/payload-checks';
import { compatibilityProblems, type CompatibilityLevel } from '../core/schema-registry/schema-compatibility';
import type { ResolvedSchemaRegistryOptions, SchemaRegistryClientLike } from '../core/schema-registry/schema-registry.options';
import { claimCheckedSchemaEvent, incompatibleSchema, notEncodable, notRegistered, payloadDoesNotFitSchema, registryRefused, schemaDeclaredLate, schemasNotReady } from '../core/schema-registry/schema-registry.messages';
import { subjectName } from '../core/schema-registry/subject-names';
import type { SchemasSource } from '../core/schema-registry/schemas-source';
import type { RegisteredSchemaReference } from '../core/asyncapi/asyncapi-document';
import { loadSchemaRegistry, type SchemaRegistryPeer, type WireSerializer } from './schema-registry.peer';

interface GovernedEvent {
  type: string;
  metadata: OutboxEventMetadata;
  schema: LoadedEventSchema;
  /** The schema as the registry stores it. */
  text: string;
  check: PayloadCheck;
}

/** One event type on one destination: its subject, and the id the registry gave its schema there. */
export interface PreparedSubject {
  eventType: string;
  destination: string;
  subject: string;
  format: LoadedEventSchema['format'];
  schemaId: number;
}

interface Prepared extends PreparedSubject {
  serializer: WireSerializer;
}

/** What the registry holds for one event type on one destination, and whether the event's schema may follow it. */
export interface SubjectCheck {
  eventType: string;
  destination: string;
  subject: string;
  format: LoadedEventSchema['format'];
  /** `new`: the subject has no version; `unchanged`: its latest is this schema; `compatible` / `incompatible`: under `level`. */
  status: 'new' | 'unchanged' | 'compatible' | 'incompatible';
  latestVersion?: number;
  level?: CompatibilityLevel;
  problems: string[];
}

export interface OutboxSchemasContext {
  /** Where an event type goes, as the message factory would place it (declared destinations). */
  destinationsOf(metadata: OutboxEventMetadata): string[];
  /** Transports whose messages are never encoded (in-process handlers get the envelope). */
  plainTransports?: readonly string[];
}

/**
 * The events that have a schema, and the subjects they are registered under. `prepare()` runs at
 * startup: it registers (or looks up) each event's schema on each declared destination, after
 * checking that the change is compatible with what the subject holds, and refuses to start
 * otherwise. The write path calls `checkBeforeWrite` (a payload that does not fit fails the
 * caller's transaction, before the INSERT); the relay's Kafka transports call `encode`.
 */
export class OutboxSchemas implements SchemasSource {
  readonly client: SchemaRegistryClientLike;
  private readonly events = new Map<string, GovernedEvent>();
  private readonly prepared = new Map<string, Prepared>();
  private readonly preparing = new Map<string, Promise<Prepared>>();
  private ready = false;

  constructor(
    private readonly options: ResolvedSchemaRegistryOptions,
    private readonly context: OutboxSchemasContext,
    private readonly peer: SchemaRegistryPeer = loadSchemaRegistry(),
  ) {
    this.client = options.client ?? peer.newClient(options.config ?? {});
    const byType = new Map<string, { metadata: OutboxEventMetadata; schema: OutboxEventSchema }>();
    for (const { metadata } of declaredEvents()) if (metadata.schema) byType.set(metadata.type, { metadata, schema: metadata.schema });
    for (const [type, schema] of Object.entries(options.events)) byType.set(type, { metadata: byType.get(type)?.metadata ?? { type, version: 1 }, schema });
    for (const [type, { metadata, schema }] of byType) {
      const loaded = loadEventSchema(type, schema, options.schemaDir);
      const text = registrySchemaText(loaded, (proto) => peer.libraries.protobuf.toBinary(peer.libraries.protobuf.fileDescriptorProtoSchema, proto));
      this.events.set(type, { type, metadata, schema: loaded, text, check: compilePayloadCheck(type, loaded, peer.libraries) });
    }
  }

  /** Event types that have a schema. */
  eventTypes(): string[] {
    return [...this.events.keys()];
  }

  /** An event type's schema as the AsyncAPI document references it: its format and subjects on `destinations`. */
  referenceOf(type: string, destinations: readonly string[]): RegisteredSchemaReference | undefined {
    const event = this.events.get(type);
    if (!event) return undefined;
    const lookupStrategy = ({ topic: 'TopicIdStrategy', record: 'RecordIdStrategy', 'topic-record': 'TopicRecordIdStrategy' } as const)[this.options.subjectStrategy];
    const subjects = [...new Set(destinations.map((destination) => subjectName(this.options.subjectStrategy, destination, event.schema.recordName)))];
    return { format: event.schema.format, subjects, lookupStrategy };
  }

  /** The subjects prepared so far (all declared ones once `prepare()` resolved). */
  subjects(): PreparedSubject[] {
    return [...this.prepared.values()].map(({ serializer: _serializer, ...subject }) => subject);
  }

  /** Checks every event's schema on every declared destination against the registry, registering nothing (`nest-outbox schemas check`). */
  async check(): Promise<SubjectCheck[]> {
    const checks: SubjectCheck[] = [];
    for (const event of this.events.values()) {
      for (const destination of this.context.destinationsOf(event.metadata)) checks.push(await this.inspect(event, destination));
    }
    return checks;
  }

  /** Registers or looks up every event's schema on every declared destination; rejects on the first incompatible or missing one. */
  async prepare(): Promise<void> {
    for (const event of this.events.values()) {
      for (const destination of this.context.destinationsOf(event.metadata)) await this.subjectFor(event, destination);
    }
    this.ready = true;
  }

  /**
   * Refuses, before anything is written, a payload its schema does not accept (naming the fields),
   * and any write of an event with a schema before `prepare()` checked the subjects. A destination
   * no subject was prepared for is checked at its first publish (see `encode`).
   */
  checkBeforeWrite(draft: { type: string; payload: unknown }, destinations: readonly { transport: string; destination: string; claimed?: unknown }[]): void {
    const event = this.events.get(draft.type);
    if (!event) {
      // Its class was loaded after the module started: it would go out as JSON where consumers expect the wire format.
      const late = eventClassOf(draft.type);
      if (late && getOutboxEventMetadata(late.prototype)?.schema) throw new OutboxWriteError(schemaDeclaredLate(draft.type));
      return;
    }
    if (!this.ready) throw new OutboxWriteError(schemasNotReady(draft.type));
    const encoded = destinations.filter(({ transport }) => !this.context.plainTransports?.includes(transport));
    if (encoded.length === 0) return;
    if (destinations.some(({ claimed }) => claimed !== undefined)) {
      throw new OutboxWriteError(claimCheckedSchemaEvent(draft.type, subjectName(this.options.subjectStrategy, encoded[0].destination, event.schema.recordName)));
    }
    // What the relay encodes is the payload as stored: JSON.
    const stored = JSON.parse(JSON.stringify(draft.payload ?? null)) as unknown;
    const problems = event.check(stored);
    if (problems.length > 0) {
      const subject = subjectName(this.options.subjectStrategy, encoded[0].destination, event.schema.recordName);
      throw new OutboxWriteError(payloadDoesNotFitSchema(draft.type, subject, event.schema.format, problems));
    }
  }

  /**
   * The message's payload in the Confluent wire format, or `undefined` for an event without a
   * schema. A destination not prepared at startup (a row of another instance, a topic only
   * `resolveTopic` knew) is prepared now, compatibility check included.
   */
  async encode(message: OutgoingMessage): Promise<Buffer | undefined> {
    const event = this.events.get(message.envelope.type);
    if (!event) return undefined;
    let prepared: Prepared;
    try {
      prepared = await this.subjectFor(event, message.destination);
    } catch (error) {
      // An incompatible or unregistered schema stays so on every attempt.
      if (error instanceof OutboxConfigurationError) throw new OutboxNonRetryableError(error.message, { cause: error });
      throw error;
    }
    const payload = event.schema.format === 'protobuf' ? this.toProtobufMessage(event, prepared.subject, message.envelope.payload) : message.envelope.payload;
    try {
      return await prepared.serializer.serialize(message.destination, payload);
    } catch (error) {
      if (!isPermanent(error)) throw error;
      throw new OutboxNonRetryableError(notEncodable(event.type, prepared.subject, error instanceof Error ? error.message : String(error)), { cause: error });
    }
  }

  private toProtobufMessage(event: GovernedEvent, subject: string, payload: unknown): unknown {
    if (event.schema.format !== 'protobuf') return payload;
    try {
      return this.peer.libraries.protobuf.fromJson(event.schema.definition, payload);
    } catch (error) {
      throw new OutboxNonRetryableError(notEncodable(event.type, subject, error instanceof Error ? error.message : String(error)), { cause: error });
    }
  }

  private subjectFor(event: GovernedEvent, destination: string): Promise<Prepared> {
    const key = `${event.type}\u0000${destination}`;
    const done = this.prepared.get(key);
    if (done) return Promise.resolve(done);
    let pending = this.preparing.get(key);
    if (!pending) {
      pending = this.register(event, destination).then((prepared) => {
        this.prepared.set(key, prepared);
        return prepared;
      });
      pending.finally(() => this.preparing.delete(key)).catch(() => undefined);
      this.preparing.set(key, pending);
    }
    return pending;
  }

  private async inspect(event: GovernedEvent, destination: string): Promise<SubjectCheck> {
    const subject = subjectName(this.options.subjectStrategy, destination, event.schema.recordName);
    const checked = { eventType: event.type, destination, subject, format: event.schema.format, problems: [] as string[] };
    const latest = await this.client.getLatestSchemaMetadata(subject).catch((error: unknown) => (isNotFound(error) ? undefined : Promise.reject(refused(event, subject, 'read the latest version of', error))));
    if (!latest) return { ...checked, status: 'new' };
    const latestVersion = latest.version ?? 0;
    if (latest.schema === event.text) return { ...checked, status: 'unchanged', latestVersion };
    const level = await this.compatibilityOf(subject);
    const problems = compatibilityProblems(level, { version: latestVersion, schema: latest.schema, schemaType: latest.schemaType }, event.schema, event.text, this.peer.libraries);
    return { ...checked, status: problems.length > 0 ? 'incompatible' : 'compatible', latestVersion, level, problems };
  }

  private async register(event: GovernedEvent, destination: string): Promise<Prepared> {
    const { subject, status, level, latestVersion, problems } = await this.inspect(event, destination);
    if (status === 'incompatible') throw new OutboxConfigurationError(incompatibleSchema(event.type, subject, level!, latestVersion!, problems));
    const info = { schema: event.text, schemaType: REGISTRY_SCHEMA_TYPE[event.schema.format] };
    let schemaId: number;
    if (this.options.autoRegister) {
      // A registry server also checks compatibility here, and answers 409 for a change it refuses.
      schemaId = await this.client.register(subject, info, false).catch((error: unknown) => Promise.reject(refused(event, subject, 'register', error)));
    } else {
      schemaId = await this.client.getId(subject, info, false).catch((error: unknown) =>
        Promise.reject(isNotFound(error) ? new OutboxConfigurationError(notRegistered(event.type, subject)) : refused(event, subject, 'look up', error)),
      );
    }
    const descriptor = event.schema.format === 'protobuf' ? event.schema.definition : undefined;
    return { eventType: event.type, destination, subject, format: event.schema.format, schemaId, serializer: this.peer.newSerializer(event.schema.format, this.client, subject, schemaId, descriptor) };
  }

  /** The subject's level, else the registry's default, else the registry's own default: BACKWARD. */
  private async compatibilityOf(subject: string): Promise<CompatibilityLevel> {
    const level = await this.client.getCompatibility(subject).catch(() => this.client.getDefaultCompatibility().catch(() => 'BACKWARD'));
    return (typeof level === 'string' ? level.toUpperCase() : 'BACKWARD') as CompatibilityLevel;
  }
}

/** A payload the schema cannot encode, or a request the registry refuses for good (4xx but timeouts and throttling); else worth another attempt. */
function isPermanent(error: unknown): boolean {
  const status = (error as { status?: number } | null)?.status;
  if (status !== undefined) return status >= 400 && status < 500 && status !== 408 && status !== 429;
  // avsc throws a plain Error("invalid …") for a value its type does not accept.
  return (error as Error)?.name === 'SerializationError' || /\binvalid\b/i.test(String((error as Error)?.message));
}

function isNotFound(error: unknown): boolean {
  const status = (error as { status?: number } | null)?.status;
  return status === 404 || /not found/i.test(String((error as Error)?.message));
}

function refused(event: GovernedEvent, subject: string, action: string, error: unknown): Error {
  const reason = error instanceof Error ? error.message : String(error);
  const status = (error as { status?: number } | null)?.status;
  // 409: the registry found the change incompatible; 422: the schema is invalid. Both are the app's to fix.
  if (status === 409 || status === 422) return new OutboxConfigurationError(registryRefused(event.type, subject, action, reason));
  return new Error(registryRefused(event.type, subject, action, reason), { cause: error });
}
