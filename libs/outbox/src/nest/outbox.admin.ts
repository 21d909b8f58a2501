import { Inject, Injectable } from '@nestjs/common';
import { OutboxAdminError } from '../core/outbox.errors';
import { invalidListOption, noSuchMessage, notAMessageId, notDead } from '../core/outbox.messages';
import type { DeadLetterOutcome, DeadMessage, OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { createSqlOutboxMaintenanceStore } from '../sql/outbox-sql.factory';
import type { SqlConnection } from '../core/sql-connection.port';
import { OUTBOX_CONNECTION, OUTBOX_EXTRAS } from './outbox.constants';
import type { ResolvedOutboxExtras } from './outbox.module-definition';
import { OutboxRelayHost } from './outbox-relay.host';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Dead letters for operators: list them, send them again, or give them up. */
@Injectable()
export class OutboxAdmin {
  private readonly store: OutboxMaintenanceStore;

  constructor(
    @Inject(OUTBOX_CONNECTION) connection: SqlConnection,
    @Inject(OUTBOX_EXTRAS) private readonly extras: ResolvedOutboxExtras,
    private readonly relayHost: OutboxRelayHost,
  ) {
    this.store = createSqlOutboxMaintenanceStore(connection, extras);
  }

  /** Dead messages, oldest first, with every failed attempt; page with the last `position` seen. */
  async listDead(options: { after?: string; limit?: number } = {}): Promise<DeadMessage[]> {
    const { after = '0', limit = 100 } = options ?? {};
    // `after` is a position (a bigint as text); anything else would reach the database as a type error.
    if (typeof after !== 'string' || !/^\d{1,19}$/.test(after)) throw new OutboxAdminError(invalidListOption('after', 'a row position (digits only)', after), 'invalid');
    if (!Number.isSafeInteger(limit) || limit < 1) throw new OutboxAdminError(invalidListOption('limit', 'a positive integer (at most 1000 are returned)', limit), 'invalid');
    return this.store.listDead(after, Math.min(limit, 1_000));
  }

  /** Makes a dead message pending again with fresh attempts; the relay is woken to send it. */
  async requeue(id: string): Promise<void> {
    this.check('requeued', id, await this.store.requeue(this.validId(id)));
    void this.relayHost.drain();
  }

  /** Gives a dead message up for good; later messages of its aggregate are released. */
  async discard(id: string): Promise<void> {
    this.check('discarded', id, await this.store.discard(this.validId(id)));
    void this.relayHost.drain();
  }

  private validId(id: string): string {
    if (typeof id !== 'string' || !UUID.test(id)) throw new OutboxAdminError(notAMessageId(id), 'invalid');
    return id;
  }

  private check(action: string, id: string, outcome: DeadLetterOutcome): void {
    if (outcome === 'done') return;
    if (outcome === 'missing') throw new OutboxAdminError(noSuchMessage(id, OutboxTable.of(this.extras).toString()), 'not-found');
    throw new OutboxAdminError(notDead(action, id, outcome), 'conflict');
  }
}
