import { createHash } from 'node:crypto';
import type { RelayLogger } from '../core/outbox-relay';
import { OutboxTable, type OutboxTableLocation } from './dialects/outbox-table';

import type { ListenClient, SqlConnection } from '../core/sql-connection.port';

type PgClient = ListenClient['client'];

/** PostgreSQL's NAMEDATALEN − 1: pg_notify refuses a longer channel, LISTEN cuts it short. */
const MAX_CHANNEL_LENGTH = 63;

/**
 * The notification channel of an outbox table: `outbox_<table>` (unchanged since before schemas,
 * so writers and relays of different versions still meet), and `outbox_<schema>.<table>` in a
 * schema, so that the same table name in two schemas makes two channels (the dot cannot occur in
 * either name). Channel names are at most 63 bytes: a longer one keeps its start and ends in a
 * hash of the whole, so that two long names do not become one channel.
 */
export function notificationChannel(location: string | OutboxTableLocation | OutboxTable): string {
  const table = OutboxTable.of(location);
  if (table.schema === undefined) return `outbox_${table.name}`.slice(0, MAX_CHANNEL_LENGTH);
  const channel = `outbox_${table.schema}.${table.name}`;
  if (channel.length <= MAX_CHANNEL_LENGTH) return channel;
  const hash = createHash('sha1').update(channel).digest('hex').slice(0, 8);
  return `${channel.slice(0, MAX_CHANNEL_LENGTH - hash.length - 1)}_${hash}`;
}

/**
 * Holds one pooled connection that LISTENs on the outbox channel, so that a commit in any
 * instance wakes this instance's relay. When the connection breaks (a database restart), it is
 * dropped and re-established with backoff, and the relay is woken once in case a notification
 * was missed meanwhile.
 */
export class PostgresNotificationListener {
  private client: PgClient | undefined;
  private release: ListenClient['release'] | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private failures = 0;

  constructor(
    private readonly connection: SqlConnection,
    private readonly channel: string,
    private readonly onNotification: () => void,
    private readonly logger: RelayLogger,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  /** Safe to call twice. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.drop(false);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.connection.listenClient) throw new Error(`a ${this.connection.layer} connection offers no LISTEN`);
      const { client, release } = await this.connection.listenClient();
      this.client = client;
      this.release = release;
      this.client.on('notification', this.notified);
      this.client.on('error', this.failed);
      this.client.on('end', this.ended);
      await this.client.query(`LISTEN "${this.channel}"`);
      if (this.failures > 0) this.logger.log(`Outbox: listening on "${this.channel}" again.`);
      this.failures = 0;
      this.onNotification();
    } catch (error) {
      await this.reconnect(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private readonly notified = (message: { channel: string }): void => {
    if (message.channel === this.channel) this.onNotification();
  };
  private readonly failed = (error?: Error): void => void this.reconnect(error);
  private readonly ended = (): void => void this.reconnect(new Error('connection ended'));

  private async reconnect(error?: Error): Promise<void> {
    if (this.stopped) return;
    await this.drop(true);
    this.failures += 1;
    const delay = Math.min(30_000, 250 * 2 ** Math.min(this.failures, 7));
    if (this.failures === 1) {
      this.logger.warn(`Outbox: LISTEN connection lost (${error?.message ?? 'unknown'}); polling covers until it is back, retrying in ${delay} ms.`);
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private async drop(broken: boolean): Promise<void> {
    const [client, release] = [this.client, this.release];
    this.client = this.release = undefined;
    if (!client || !release) return;
    // Only this listener's own handlers: the pool's guard (connection-error.guard.ts) must stay, or an
    // error during the UNLISTEN below, or before the pool listens again, would end the process.
    client.removeListener('notification', this.notified);
    client.removeListener('error', this.failed);
    client.removeListener('end', this.ended);
    // A broken client must not go back into the pool: release(true) destroys it.
    if (!broken) await client.query(`UNLISTEN "${this.channel}"`).catch(() => undefined);
    release(broken);
  }
}
