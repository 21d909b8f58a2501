import { Inject, Injectable } from '@nestjs/common';
import { OutboxAdminError } from '../core/outbox.errors';
import { invalidListOption, noSuchMessage, notAMessageId, notDead } from '../core/outbox.messages';
import type { DeadLetterOutcome, DeadMessage, OutboxMaintenanceStore } from '../core/outbox-maintenance.port';
import { OutboxTable } from '../sql/dialects/outbox-table';
import { createSqlOutboxMaintenanceStore, createSqlReplayStore } from '../sql/outbox-sql.factory';
import { ConsoleError } from '../core/console/console.error';
import { OutboxReplay, type ReplayOutcome, type ReplayRequest } from '../core/replay/outbox-replay';
import type { SqlConnection } from '../core/sql-connection.port';
import { OUTBOX_CONNECTION, OUTBOX_EXTRAS } from './outbox.constants';
import type { ResolvedOutboxExtras } from './outbox.module-definition';
import { OutboxRelayHost } from './outbox-relay.host';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Dead letters for operators: list them, send them again, or give them up; and replays of published messages. */
@Injectable()
export class OutboxAdmin {
  private readonly store: OutboxMaintenanceStore;
  private readonly replayer: OutboxReplay;

  constructor(
    @Inject(OUTBOX_CONNECTION) connection: SqlConnection,
    @Inject(OUTBOX_EXTRAS) private readonly extras: ResolvedOutboxExtras,
    private readonly relayHost: OutboxRelayHost,
  ) {
    this.store = createSqlOutboxMaintenanceStore(connection, extras);
    this.replayer = new OutboxReplay(createSqlReplayStore(connection, extras));
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

  /**
   * Sends published messages the table still keeps again, with their ids, to their destinations, in
   * their original order; `filter` (at least one field, or `all: true`) and `reason` are required.
   * Refusals throw `OutboxAdminError` (`invalid`, `not-found`, `conflict`). See
   * docs/console-and-cli.md, "Replaying published messages".
   */
  async replay(request: ReplayRequest): Promise<ReplayOutcome> {
    try {
      const outcome = await this.replayer.replay({ by: 'OutboxAdmin', ...request });
      if (outcome.replayed > 0) void this.relayHost.drain();
      return outcome;
    } catch (error) {
      if (error instanceof ConsoleError) throw new OutboxAdminError(error.message, error.kind);
      throw error;
    }
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
