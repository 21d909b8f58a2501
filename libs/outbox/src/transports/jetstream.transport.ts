import type { EnvelopeFormat } from '../core/cloudevents/envelope-options';
import { bodyOf, type OutgoingMessage } from '../core/outbox-message';
import type { OutboxTransport } from '../core/outbox-transport.port';
import { loadOptionalPeers } from '../core/optional-peer';
import { natsNeedsPackages } from './nats.messages';

export interface JetStreamTransportOptions {
  /** NATS server URL(s), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** Create this stream at first use if it does not exist (a publish to a subject no stream captures fails). */
  stream?: { name: string; subjects: string[] };
  /** Name in logs. Default `'nats-jetstream'`. */
  name?: string;
  /** More NATS connection options. Default `{ maxReconnectAttempts: -1 }`: a long-lived transport never gives up. */
  connectionOptions?: Record<string, unknown>;
}

interface JetStreamClient {
  publish(subject: string, payload: string, options: object): Promise<unknown>;
}

interface NatsModules {
  connect(options: Record<string, unknown>): Promise<NatsConnection>;
  headers(): { set(name: string, value: string): void };
  jetstream(connection: NatsConnection): JetStreamClient;
  jetstreamManager(connection: NatsConnection): Promise<{
    streams: { info(name: string): Promise<unknown>; add(config: { name: string; subjects: string[] }): Promise<unknown> };
  }>;
}

interface NatsConnection {
  close(): Promise<void>;
  isClosed(): boolean;
}

/**
 * Publishes to NATS JetStream and waits for the stream's publish acknowledgement. The message
 * id doubles as JetStream's `Nats-Msg-Id`, so a retry inside the stream's duplicate window is
 * stored once. Core-NATS subscribers (a Nest `@EventPattern` on the NATS transport) still
 * receive the messages: the stream captures them, it does not hide them.
 */
export class JetStreamTransport implements OutboxTransport {
  readonly name: string;
  readonly acknowledgement = 'broker' as const;
  /** The body goes as is, with NATS headers: structured CloudEvents fit; binary mode's ce_* headers are Kafka's binding. */
  readonly envelopeFormats: readonly EnvelopeFormat[] = ['outbox', 'cloudevents-structured'];
  private connecting: Promise<{ connection: NatsConnection; client: JetStreamClient }> | undefined;

  constructor(private readonly options: JetStreamTransportOptions) {
    this.name = options.name ?? 'nats-jetstream';
  }

  async publish(message: OutgoingMessage): Promise<void> {
    const { client } = await this.connected();
    const nats = natsModules();
    const headers = nats.headers();
    for (const [name, value] of Object.entries(message.headers)) headers.set(name, value);
    headers.set('outbox-key', message.key);
    await client.publish(message.destination, JSON.stringify(bodyOf(message)), { msgID: message.envelope.id, headers });
  }

  /** Closes the connection; the outbox calls it on application shutdown. Safe to call twice. */
  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    if (connecting) await (await connecting.catch(() => undefined))?.connection.close();
  }

  /** Opens the connection ahead of the first publish. */
  async connect(): Promise<void> {
    await this.connected();
  }

  private connected() {
    void this.connecting?.then((current) => {
      // A connection that gave up reconnecting is replaced on the next publish.
      if (current.connection.isClosed()) this.connecting = undefined;
    });
    this.connecting ??= this.open().catch((error: unknown) => {
      // A failed connection is not cached: the next publish tries again.
      this.connecting = undefined;
      throw error;
    });
    return this.connecting;
  }

  private async open() {
    const nats = natsModules();
    const connection = await nats.connect({ maxReconnectAttempts: -1, ...this.options.connectionOptions, servers: this.options.servers, name: this.name });
    if (this.options.stream) {
      const manager = await nats.jetstreamManager(connection);
      const { name, subjects } = this.options.stream;
      await manager.streams.info(name).catch(() => manager.streams.add({ name, subjects }));
    }
    return { connection, client: nats.jetstream(connection) };
  }
}

let modules: NatsModules | undefined;

// Loaded on first use, so that applications without NATS need neither package.
function natsModules(): NatsModules {
  if (!modules) {
    const [core, jetstream] = loadOptionalPeers<[object, object]>(['@nats-io/transport-node', '@nats-io/jetstream'], (absent) => natsNeedsPackages('JetStreamTransport', absent));
    modules = { ...core, ...jetstream } as NatsModules;
  }
  return modules;
}
