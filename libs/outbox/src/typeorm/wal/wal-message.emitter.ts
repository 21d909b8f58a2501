import type { EntityManager } from 'typeorm';
import type { NewOutboxMessage } from '../../core/outbox-message';
import { encodeWalRecord } from '../../core/stream/wal-record';
import { WAL_EMIT_STATEMENT } from '../../sql/wal-emit.statement';
import { canRunPrepared, runPrepared } from '../prepared-statements';

/**
 * The WAL delivery mode's write: the messages of one write as one logical decoding message in the
 * caller's transaction. Chosen over an outbox row inserted and deleted again by a measurement
 * (README, "WAL delivery mode"): it costs a save about half what the row does.
 */
export class WalMessageEmitter {
  constructor(
    readonly prefix: string,
    private readonly preparedStatements: boolean,
  ) {}

  async emit(manager: EntityManager, messages: readonly NewOutboxMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const params = [this.prefix, encodeWalRecord(messages)];
    if (this.preparedStatements && canRunPrepared(manager)) await runPrepared(manager, WAL_EMIT_STATEMENT, params);
    else await manager.query(WAL_EMIT_STATEMENT, params);
  }
}
