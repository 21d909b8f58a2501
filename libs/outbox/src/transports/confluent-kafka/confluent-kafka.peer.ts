import { OutboxConfigurationError } from '../../core/outbox.errors';
import { loadOptionalPeers } from '../../core/optional-peer';
import type { LibrdkafkaValue } from './confluent-kafka.options';
import { CONFLUENT_KAFKA_PACKAGE, confluentKafkaAddonMissing, missingConfluentKafka } from './confluent-kafka.messages';

// The few members of @confluentinc/kafka-javascript's node-rdkafka-style API the transport uses,
// declared here so that the library's types do not name a package an application may not have.

/** librdkafka's error as the binding reports it. */
export interface LibrdkafkaError extends Error {
  code?: number;
  isFatal?: boolean;
}

export interface DeliveryReport {
  topic: string;
  partition: number;
  opaque?: unknown;
}

export interface NativeProducer {
  connect(metadataOptions: { timeout?: number }, callback: (error: LibrdkafkaError | null) => void): void;
  setPollInBackground(set: boolean): void;
  getMetadata(options: { allTopics: boolean; topic?: string; timeout: number }, callback: (error: LibrdkafkaError | null) => void): void;
  produce(topic: string, partition: null, value: Buffer, key: string, timestamp: null, opaque: unknown, headers: Array<Record<string, string>>): unknown;
  on(event: 'delivery-report', listener: (error: LibrdkafkaError | null, report: DeliveryReport) => void): void;
  on(event: 'event.error', listener: (error: LibrdkafkaError) => void): void;
  disconnect(timeoutMs: number, callback: (error?: unknown) => void): void;
}

interface ConfluentKafkaModule {
  Producer: new (config: Record<string, LibrdkafkaValue>) => NativeProducer;
  librdkafkaVersion?: string;
}

let loaded: ConfluentKafkaModule | undefined;

/**
 * Loads the package the first time a transport is built (through the library's one loader of
 * optional peers), and tells a missing package apart from a package whose native addon was
 * never built (npm skipped its install script, or the download failed).
 */
export function loadConfluentKafka(): ConfluentKafkaModule {
  if (loaded) return loaded;
  try {
    [loaded] = loadOptionalPeers<[ConfluentKafkaModule]>([CONFLUENT_KAFKA_PACKAGE], missingConfluentKafka);
  } catch (error) {
    if (error instanceof OutboxConfigurationError) throw error;
    // `bindings` throws a plain Error when the .node file is absent; dlopen fails on an addon built for another Node.
    throw new OutboxConfigurationError(confluentKafkaAddonMissing(error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error)));
  }
  return loaded;
}
