import { loadOptional } from '../core/optional-peer';
import { WAL_ONLY_PACKAGE_OTHERWISE, type ReplicationConnectionConfig } from './pg-logical-replication.loader';

/** The part of `pg`'s Client the lock uses. */
interface LockClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error' | 'end', listener: (error?: Error) => void): void;
}

/**
 * Which instance streams a slot: the one holding a session advisory lock named after it, on a
 * connection of its own kept for as long as it streams. The others wait in `pg_advisory_lock`,
 * and PostgreSQL grants the lock to one of them the moment the holder's session ends, a crash
 * included, so a standby takes over on that event rather than on a timer that asks for the slot.
 */
export class WalStreamLock {
  private client: LockClient | undefined;
  private acquiring: Promise<void> | undefined;

  constructor(
    private readonly connection: ReplicationConnectionConfig,
    private readonly slotName: string,
    /** The lock's connection ended while held: another instance may stream now, so this one must stop. */
    private readonly onLost: (error: Error) => void,
  ) {}

  /** True while this instance holds the lock. */
  get held(): boolean {
    return this.client !== undefined && this.acquiring === undefined;
  }

  /** Resolves once this instance holds the lock, however long another holds it; rejects if the connection fails. */
  acquire(): Promise<void> {
    if (this.held) return Promise.resolve();
    this.acquiring ??= this.waitForLock().finally(() => (this.acquiring = undefined));
    return this.acquiring;
  }

  /** Gives the lock up (ending its connection), or stops waiting for it. Safe to call twice. */
  async release(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async waitForLock(): Promise<void> {
    const { Client } = loadOptional<{ Client: new (config: object) => LockClient }>('pg', 'delivery', WAL_ONLY_PACKAGE_OTHERWISE);
    // keepAlive: the connection idles for as long as the instance streams; a peer that vanished is found by TCP.
    const client = new Client({ ...this.connection, application_name: 'nest-outbox-wal-lock', keepAlive: true });
    this.client = client;
    // Without a listener, an error on an idle connection (the server restarting) would end the process.
    // While waiting, a failure rejects `acquire` instead.
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      const wasHeld = this.held;
      this.client = undefined;
      void client.end().catch(() => undefined);
      if (wasHeld) this.onLost(error ?? new Error('the connection holding the stream lock closed'));
    };
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`SELECT pg_advisory_lock(hashtext('nest-outbox'), hashtext($1))`, [`wal-stream:${this.slotName}`]);
      if (this.client !== client) throw new Error('the stream lock was released while waiting for it');
    } catch (error) {
      if (this.client === client) this.client = undefined;
      await client.end().catch(() => undefined);
      throw error;
    }
  }
}
