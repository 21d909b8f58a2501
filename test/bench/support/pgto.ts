import type { Client } from 'pg';
import type { Producer } from 'kafkajs';
import { sleep } from './env';
import type { GeneralMessageHandler, TransactionalMessage } from 'pg-transactional-outbox';

/**
 * pg-transactional-outbox's message handler for P1's contenders (polling and replication
 * listeners): each message sent with kafkajs (`acks: -1`) as the library's envelope and headers,
 * as its README's publisher does with RabbitMQ.
 */
export function pgtoKafkaHandler(producer: Producer, topic: string): GeneralMessageHandler {
  return {
    handle: async (message: TransactionalMessage) => {
      await producer.send({
        topic,
        acks: -1,
        messages: [
          {
            key: message.aggregateId,
            value: JSON.stringify({
              id: message.id,
              type: message.messageType,
              version: 1,
              aggregateType: message.aggregateType,
              aggregateId: message.aggregateId,
              occurredAt: message.createdAt,
              headers: {},
              payload: message.payload,
            }),
            headers: {
              'outbox-message-id': message.id,
              'outbox-event-type': message.messageType,
              'outbox-event-version': '1',
              'outbox-aggregate-type': message.aggregateType,
              'outbox-aggregate-id': message.aggregateId,
              'outbox-occurred-at': message.createdAt,
            },
          },
        ],
      });
    },
  };
}

/** pg-transactional-outbox takes a pino-style logger; this one counts warnings and errors and prints nothing. */
export class QuietPinoLikeLogger {
  level = 'warn';
  warnings = 0;
  errors = 0;
  readonly first: string[] = [];
  fatal = (...args: unknown[]) => this.count('error', args);
  error = (...args: unknown[]) => this.count('error', args);
  warn = (...args: unknown[]) => this.count('warn', args);
  info = () => undefined;
  debug = () => undefined;
  trace = () => undefined;
  silent = () => undefined;
  private count(kind: 'warn' | 'error', args: unknown[]): void {
    if (kind === 'warn') this.warnings++;
    else this.errors++;
    const text = args.map((arg) => (arg instanceof Error ? arg.message : typeof arg === 'string' ? arg : '')).filter(Boolean).join(' ');
    if (this.first.length < 3) this.first.push(`${kind}: ${text}`.slice(0, 300));
    if (process.env.BENCH_VERBOSE) console.error(`[pg-transactional-outbox] ${kind}: ${text}`);
  }
}

/**
 * Counts the table's processed rows every 250 ms from `started` until all `count` are processed or
 * `deadline` (performance.now() ms) passes; then what the logger counted meanwhile. Read before the
 * listener's shutdown: stopping it mid-batch makes its in-flight handlers log pool errors.
 */
export async function pollProcessed(
  admin: Client,
  qualifiedTable: string,
  count: number,
  started: number,
  deadline: number,
  logger: QuietPinoLikeLogger,
): Promise<{ processed: number; seconds: number; problems: string }> {
  let processed = 0;
  let seconds = 0;
  while (performance.now() < deadline) {
    await sleep(250);
    processed = Number((await admin.query(`SELECT count(*) AS n FROM ${qualifiedTable} WHERE processed_at IS NOT NULL`)).rows[0].n);
    seconds = (performance.now() - started) / 1000;
    if (processed >= count) break;
  }
  const problems = `${logger.errors} errors, ${logger.warnings} warnings logged while measuring${logger.first.length ? ` (first: ${logger.first[0]})` : ''}`;
  return { processed, seconds, problems };
}
