import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { pollUntil } from './outbox';

// kafkajs prints a notice about its default partitioner on every producer; the benchmarks
// (and Nest's ClientKafka) use that default partitioner on purpose.
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

export const REPO_ROOT = join(__dirname, '..', '..', '..', '..', '..');

export interface BenchServices {
  postgresUrl: string;
  kafkaBrokers: string[];
  servicesDir: string;
}

/** Connection settings written by `scripts/services.sh up postgres kafka` (env.json), the process environment winning. */
export function benchServices(): BenchServices {
  const servicesDir = process.env.OUTBOX_SERVICES_DIR ?? join(REPO_ROOT, '.services');
  const file = join(servicesDir, 'env.json');
  const fromFile = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  const postgresUrl = process.env.OUTBOX_TEST_POSTGRES_URL ?? fromFile.OUTBOX_TEST_POSTGRES_URL;
  const brokers = process.env.OUTBOX_TEST_KAFKA_BROKERS ?? fromFile.OUTBOX_TEST_KAFKA_BROKERS;
  if (!postgresUrl || !brokers) {
    throw new Error(
      `PostgreSQL and the Kafka test broker must be running (read ${file}). ` +
        `Use "npm run bench", which starts and stops them, or "bash scripts/services.sh up postgres kafka".`,
    );
  }
  return { postgresUrl, kafkaBrokers: brokers.split(','), servicesDir };
}

export const kafkaLogLevel = (): logLevel => (process.env.BENCH_VERBOSE ? logLevel.WARN : logLevel.NOTHING);

export function suffix(bytes = 4): string {
  return randomBytes(bytes).toString('hex');
}

/** A URL for another database on the same server. */
export function databaseUrl(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh schema; `drop()` removes it with everything in it. */
export async function privateSchema(url: string, prefix: string): Promise<{ schema: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${suffix(5)}`;
  await withClient(url, (client) => client.query(`CREATE SCHEMA ${schema}`));
  return { schema, drop: () => withClient(url, (client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)).then(() => undefined) };
}

/** TypeORM options for a PostgreSQL data source confined to one schema. */
export function postgresOptions(url: string, schema: string, poolSize = 10) {
  return {
    type: 'postgres' as const,
    url,
    schema,
    extra: { options: `-c search_path=${schema}`, max: poolSize },
    logging: false,
  };
}

export function newKafka(brokers: string[], clientId: string): Kafka {
  return new Kafka({ clientId, brokers, logLevel: kafkaLogLevel() });
}

/** A plain kafkajs producer with default settings (what Nest's ClientKafka creates too). */
export async function connectedProducer(brokers: string[], clientId: string): Promise<Producer> {
  const producer = newKafka(brokers, clientId).producer();
  await producer.connect();
  return producer;
}

/**
 * The first produce to a new topic makes the test broker create it (4 partitions); kafkajs
 * retries until the leader is known. Done before any timing, for every contender alike.
 */
export async function warmTopic(producer: Producer, topic: string): Promise<void> {
  await producer.send({ topic, acks: -1, messages: [{ key: '__warmup', value: '{}' }] });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Wall-clock milliseconds with sub-millisecond resolution, comparable across processes on one machine. */
export const wallNow = () => performance.timeOrigin + performance.now();

/** Polls `probe` every `everyMs` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export function waitUntil<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs: number, everyMs = 50): Promise<T> {
  return pollUntil(what, probe, timeoutMs, everyMs);
}

/** A relay logger that counts what went wrong instead of printing it (and keeps the first lines). */
export class CountingLogger {
  warnings = 0;
  errors = 0;
  readonly first: string[] = [];
  log(): void {}
  warn(message: string): void {
    this.warnings++;
    this.keep(`warn: ${message}`);
  }
  error(message: string): void {
    this.errors++;
    this.keep(`error: ${message}`);
  }
  private keep(line: string): void {
    if (this.first.length < 5) this.first.push(line);
    if (process.env.BENCH_VERBOSE) console.error(line);
  }
}
