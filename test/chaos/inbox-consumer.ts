import { randomBytes } from 'node:crypto';
import { Kafka, logLevel, type Admin, type Consumer } from 'kafkajs';
import { DataSource } from 'typeorm';
import type { OutboxEnvelope } from '@nest-outbox/outbox';
import { TypeOrmInbox, TypeOrmInboxStore } from '@nest-outbox/outbox/typeorm';
import type { Finding } from './analysis';
import { subscribedFromTheStart } from './ledger';

const CONSUMER = 'chaos.order-projector';
/** Every this-many-th record is handled twice at once, as a broker redelivering it concurrently would. */
const INJECT_EVERY = 25;

/**
 * A consumer whose side effect goes through the inbox: for every record of the topic it inserts a
 * row into `chaos_side_effects` (no unique key there: the inbox alone must keep it to one per
 * message), inside `TypeOrmInbox.process`. It sees every duplicate the relays produce, re-reads
 * after its own restarts (broker outage, PostgreSQL restart), and duplicates injected on purpose.
 */
export class InboxConsumer {
  private readonly kafka: Kafka;
  private consumer: Consumer | undefined;
  private admin: Admin | undefined;
  private dataSource: DataSource | undefined;
  private inbox: TypeOrmInbox | undefined;
  private readonly doneOffsets = new Set<string>();
  private readonly seenIds = new Set<string>();
  readonly counts = { handled: 0, applied: 0, skipped: 0, failures: 0, injected: 0, relayDuplicates: 0, rereads: 0 };
  private readonly handledOffsets = new Set<string>();

  constructor(
    brokers: string[],
    private readonly topic: string,
    private readonly postgresUrl: string,
    private readonly schema: string,
    private readonly log: (line: string) => void,
    /** Self test: write the side effect without the inbox, so the duplicate check must fail. */
    private readonly bypassInbox = false,
  ) {
    this.kafka = new Kafka({ clientId: `chaos-inbox-${randomBytes(3).toString('hex')}`, brokers, logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 200, maxRetryTime: 3_000 } });
  }

  async start(): Promise<void> {
    this.dataSource = new DataSource({
      type: 'postgres',
      url: this.postgresUrl,
      schema: this.schema,
      extra: { options: `-c search_path=${this.schema}`, max: 6 },
      logging: false,
    });
    await this.dataSource.initialize();
    await this.dataSource.query(`CREATE TABLE chaos_side_effects (n bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, message_id uuid NOT NULL, at timestamptz NOT NULL DEFAULT now())`);
    this.inbox = new TypeOrmInbox(this.dataSource, new TypeOrmInboxStore(this.dataSource, 'outbox_inbox'));
    this.admin = this.kafka.admin();
    await this.admin.connect();
    this.consumer = await subscribedFromTheStart(this.kafka, 'inbox', this.topic, this.log);
    await this.consumer.run({
      partitionsConsumedConcurrently: 3,
      eachMessage: async ({ message, partition }) => {
        const where = `${partition}:${message.offset}`;
        const envelope = JSON.parse(message.value?.toString() ?? 'null') as OutboxEnvelope;
        if (this.handledOffsets.has(where)) this.counts.rereads += 1;
        else if (this.seenIds.has(envelope.id)) this.counts.relayDuplicates += 1;
        this.handledOffsets.add(where);
        this.seenIds.add(envelope.id);
        const inject = Number(message.offset) % INJECT_EVERY === 0;
        try {
          // A throw (PostgreSQL down) leaves the offset uncommitted: kafkajs delivers the record again.
          await Promise.all(inject ? [this.handle(envelope), this.handle(envelope)] : [this.handle(envelope)]);
        } catch (error) {
          this.counts.failures += 1;
          throw error;
        }
        if (inject) this.counts.injected += 1;
        this.doneOffsets.add(where);
      },
    });
  }

  private async handle(envelope: OutboxEnvelope): Promise<void> {
    this.counts.handled += 1;
    if (this.bypassInbox) {
      await this.dataSource!.query('INSERT INTO chaos_side_effects (message_id) VALUES ($1)', [envelope.id]);
      this.counts.applied += 1;
      return;
    }
    const outcome = await this.inbox!.process(envelope, CONSUMER, (manager) =>
      manager.query('INSERT INTO chaos_side_effects (message_id) VALUES ($1)', [envelope.id]),
    );
    if (outcome.duplicate) this.counts.skipped += 1;
    else this.counts.applied += 1;
  }

  /** Whether every record up to each partition's high watermark has been handled. */
  async caughtUp(): Promise<{ caughtUp: boolean; behind: number }> {
    const offsets = await this.admin!.fetchTopicOffsets(this.topic);
    const done = new Map<number, number>();
    for (const where of this.doneOffsets) {
      const partition = Number(where.split(':')[0]);
      done.set(partition, (done.get(partition) ?? 0) + 1);
    }
    let behind = 0;
    for (const { partition, high, low } of offsets) behind += Math.max(0, Number(high) - Number(low) - (done.get(partition) ?? 0));
    return { caughtUp: behind === 0, behind };
  }

  /** The promises of the inbox: one side effect per published message, while duplicates did arrive. */
  async findings(publishedIds: string[]): Promise<{ findings: Finding[]; figures: Array<[string, string | number]> }> {
    const effects: Array<{ message_id: string; n: string }> = await this.dataSource!.query(
      `SELECT message_id, COUNT(*) AS n FROM chaos_side_effects GROUP BY message_id`,
    );
    const perId = new Map(effects.map((row) => [row.message_id, Number(row.n)]));
    const duplicateEffects = [...perId.values()].reduce((sum, n) => sum + n - 1, 0);
    const missing = publishedIds.filter((id) => !perId.has(id)).length;
    const duplicateDeliveries = this.counts.relayDuplicates + this.counts.rereads + this.counts.injected;
    const { handled, applied, skipped, failures, injected, relayDuplicates, rereads } = this.counts;
    return {
      figures: [
        ['inbox consumer: handler calls / side effects applied / skipped as duplicates', `${handled} / ${applied} / ${skipped}`],
        ['inbox consumer: duplicate deliveries (relay duplicates / re-reads after restarts / injected concurrent)', `${duplicateDeliveries} (${relayDuplicates} / ${rereads} / ${injected})`],
        ['inbox consumer: failed handlings (retried by the consumer)', failures],
      ],
      findings: [
        {
          check: 'inbox: one side effect per message (duplicate side effects 0, none missing)',
          ok: duplicateEffects === 0 && missing === 0,
          detail: `${perId.size} messages with a side effect; duplicate side effects ${duplicateEffects}; published messages without one ${missing}`,
        },
        {
          check: 'inbox: duplicate deliveries reached it (so it did the work)',
          ok: duplicateDeliveries > 0 && skipped > 0,
          detail: `${duplicateDeliveries} duplicate deliveries, ${skipped} skipped`,
        },
      ],
    };
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
    await this.admin?.disconnect().catch(() => undefined);
    await this.dataSource?.destroy().catch(() => undefined);
  }
}
