// What a transport spec file hands the contract (describeTransportContract in transport-contract.ts):
// the broker's client options, how to read metadata at the consumer, how to take the broker away.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type DynamicModule, type Provider } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BaseRpcContext, ClientsModule, type ClientOptions, type ClientProviderOptions, type MicroserviceOptions } from '@nestjs/microservices';
import { timeout } from 'rxjs';
import { OutboxModule, type OutboxEnvelope } from '@nest-outbox/outbox';
import { serviceEnv, type ServiceName } from '../support/services';

const run = promisify(execFile);
const REPO_ROOT = join(__dirname, '..', '..');

/** What a consumer could see next to the body, read from the Nest context of the transport. */
export interface ReceivedMetadata {
  /** The message key, if the broker carries one (on header brokers: the `outbox-key` header). */
  key?: string;
  /** String headers / user properties as the consumer sees them. */
  headers: Record<string, string>;
  /** Other transport-specific facts (message properties, QoS, subject...), compared with `expectedProperties`. */
  properties: Record<string, unknown>;
}

/** One test's private names and controls, handed to the spec's builders. */
export interface TransportRun {
  /** Random per test: queue, topic, subject and client ids derive from it. */
  readonly suffix: string;
  /** Where the outbox publishes (every event of the run goes there). */
  readonly topic: string;
  /** A free loopback port, for specs whose consumer listens itself (TCP). */
  readonly port: number;
  /** Address of one of the spec's services, as read when the test started (stays valid during an outage). */
  url(service: ServiceName): string;
  /** Closes the consumer microservice (what it received is kept). */
  stopConsumer(): Promise<void>;
  /** Starts a new consumer microservice with the same options (same queue, port...). */
  startConsumer(): Promise<void>;
}

/** A broker that can be taken away and brought back with its port and data. */
export interface BrokerControl {
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** A producing side that is not a `ClientsModule` client (e.g. a custom `OutboxTransport` provider). */
export interface CustomProducer {
  /** The token given to `OutboxModule.forRoot({ transport })`. */
  token: string | symbol;
  imports?: Array<DynamicModule | (new (...args: never[]) => unknown)>;
  providers?: Provider[];
}

export interface TransportSpec {
  /** The transport name the library reports (logs, errors), e.g. `rabbitmq`. */
  name: string;
  /** Services from scripts/services.sh this spec needs; missing ones fail with "how to start it". */
  services: ServiceName[];
  /** Destination for this run (topic, queue pattern, subject, channel). */
  topic(suffix: string): string;
  /** The producing side: a Nest client (registered with `ClientsModule`) or a custom provider. */
  producer(run: TransportRun): ClientProviderOptions | CustomProducer;
  /** The consuming side, for `NestFactory.createMicroservice`. */
  consumer(run: TransportRun): MicroserviceOptions;
  /** What the consumer can see besides the body. */
  metadata: {
    read(context: BaseRpcContext): ReceivedMetadata;
    /** Whether the envelope fields arrive as `outbox-*` headers (plus `outbox-key`), or no header at all. */
    headers: 'envelope' | 'none';
    /** Transport-specific facts expected for one message (compared with `toEqual`). */
    expectedProperties(envelope: OutboxEnvelope, run: TransportRun): Record<string, unknown>;
  };
  /** The `acknowledgement` level the library must report for this client. */
  acknowledgement: 'broker' | 'none';
  outage: {
    /** Takes the broker away and back, keeping its port and data. */
    broker(run: TransportRun): BrokerControl;
    /** What the relay records on a row whose publish failed while the broker was down. */
    lastError: RegExp;
    /**
     * What the broker promises for messages published after its restart:
     * - `all`: it keeps them for the consumer (durable queue, persistent session) or the
     *   consumer is the endpoint itself (TCP): every event must arrive;
     * - `subscribed-only`: pub/sub that keeps nothing for absent subscribers (Redis, core NATS):
     *   a message published before the consumer has subscribed again is gone. Such losses are
     *   allowed only for rows published before the consumer was seen back; every later one must arrive.
     */
    delivery: 'all' | 'subscribed-only';
    /** Client used to send probe messages that tell when the consumer is subscribed again (`subscribed-only`). */
    probe?(run: TransportRun): ClientOptions;
    /** Set (with the reason) when the Nest consumer does not come back by itself after a broker restart. */
    restartConsumer?: string;
  };
}

/** A custom producer names its token; anything else is a `ClientsModule` registration. */
export const isCustomProducer = (producer: ClientProviderOptions | CustomProducer): producer is CustomProducer => 'token' in producer;

/** Stops / resumes a service of scripts/services.sh (keeps its data dir and port). */
export function serviceOutage(service: ServiceName): (run: TransportRun) => BrokerControl {
  // Asynchronous on purpose: the app and its relay keep running while the broker goes away and comes back.
  const services = (command: 'stop' | 'resume') =>
    run('bash', ['scripts/services.sh', command, service], {
      cwd: REPO_ROOT,
      env: { ...process.env, OUTBOX_SERVICES_DIR: serviceEnv().OUTBOX_SERVICES_DIR ?? join(REPO_ROOT, '.services') },
      timeout: 180_000,
    }).then(() => undefined);
  return () => ({ stop: () => services('stop'), start: () => services('resume') });
}

/** The consumer's headers as a plain object (header values that are lists are joined with commas). */
export function stringHeaders(headers: Record<string, unknown> | undefined | null): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : Buffer.isBuffer(value) ? value.toString() : String(value)]),
  );
}
