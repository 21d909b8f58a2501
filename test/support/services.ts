import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type ServiceName = 'postgres' | 'mariadb' | 'kafka' | 'rabbitmq' | 'nats' | 'redis' | 'mqtt';

const ENV_KEYS: Record<ServiceName, string> = {
  postgres: 'OUTBOX_TEST_POSTGRES_URL',
  mariadb: 'OUTBOX_TEST_MARIADB_URL',
  kafka: 'OUTBOX_TEST_KAFKA_BROKERS',
  rabbitmq: 'OUTBOX_TEST_RABBITMQ_URL',
  nats: 'OUTBOX_TEST_NATS_URL',
  redis: 'OUTBOX_TEST_REDIS_URL',
  mqtt: 'OUTBOX_TEST_MQTT_URL',
};

/** Connection settings written by `scripts/services.sh up`, with the process environment taking precedence. */
export function serviceEnv(): Record<string, string> {
  const dir = process.env.OUTBOX_SERVICES_DIR ?? join(__dirname, '..', '..', '.services');
  const file = join(dir, 'env.json');
  const fromFile = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  return { ...fromFile, ...pick(process.env) };
}

/** The address of a running service, or an error that says how to start it. Never a skip. */
export function requireService(service: ServiceName): string {
  const value = serviceEnv()[ENV_KEYS[service]];
  if (!value) {
    throw new Error(
      `${service} is not running for the tests (${ENV_KEYS[service]} is not set). ` +
        `Start it with "bash scripts/services.sh up ${service}", or run the whole suite with "npm test", which starts and stops what it needs.`,
    );
  }
  return value;
}

function pick(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[0].startsWith('OUTBOX_') && !!entry[1]));
}

/**
 * Fails, saying how to start the right one, unless the Kafka test broker is built from librdkafka
 * `minimum` or newer (scripts/services.sh publishes the version it was built from).
 */
export function requireKafkaMockFrom(minimum: string, why: string): void {
  requireService('kafka');
  const built = serviceEnv().OUTBOX_TEST_KAFKA_MOCK_LIBRDKAFKA ?? 'unknown';
  if (!isAtLeast(built, minimum)) {
    throw new Error(
      `This test needs the Kafka test broker built from librdkafka ${minimum} or newer, and the running one is from ${built} (${why}). ` +
        `Start it with "OUTBOX_KAFKA_MOCK_LIBRDKAFKA=bundled bash scripts/services.sh up kafka" (the default).`,
    );
  }
}

function isAtLeast(version: string, minimum: string): boolean {
  const have = version.split('.').map(Number);
  const want = minimum.split('.').map(Number);
  if (have.some((part) => !Number.isInteger(part))) return false;
  for (let i = 0; i < want.length; i++) {
    const part = have[i] ?? 0;
    if (part !== want[i]) return part > want[i];
  }
  return true;
}
