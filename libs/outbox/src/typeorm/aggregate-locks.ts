import type { EntityManager, QueryRunner } from 'typeorm';
import { OutboxWriteError } from '../core/outbox.errors';
import { aggregateLockTimeout } from '../core/outbox.messages';
import type { OutboxTableDialect } from '../sql/dialects/outbox-sql.dialect';

/**
 * Serializes the writers of one aggregate, whichever path writes (explicit `add` or a save), so
 * that positions of an aggregate are handed out in commit order: a later writer gets its
 * positions only after the earlier one has committed. PostgreSQL's advisory locks end with the
 * transaction by themselves; MariaDB's GET_LOCK belongs to the session, so the keys a connection
 * holds are remembered here and released when its outermost transaction ends.
 */
export class AggregateLocks {
  private readonly sessionLocks = new WeakMap<QueryRunner, { dialect: OutboxTableDialect; keys: Set<string> }>();

  /** Takes the locks of `keys` not yet held by this transaction; call before inserting their rows. */
  async lock(manager: EntityManager, dialect: OutboxTableDialect, aggregateKeys: string[]): Promise<void> {
    let keys = [...new Set(aggregateKeys)].sort();
    const queryRunner = manager.queryRunner;
    const held = queryRunner && dialect.unlockAggregates ? this.heldBy(queryRunner, dialect) : undefined;
    // GET_LOCK counts re-entries; taking each key once keeps one release per key enough.
    if (held) keys = keys.filter((key) => !held.has(key));
    if (keys.length === 0) return;
    const statement = dialect.lockAggregates(keys);
    if (!statement) return;
    const rows = (await manager.query(statement.sql, statement.params)) as Record<string, unknown>[];
    if (!held) return;
    const results = Object.values(rows[0] ?? {});
    keys.forEach((key, index) => {
      if (Number(results[index]) === 1) held.add(key);
    });
    if (results.length !== keys.length || results.some((result) => Number(result) !== 1)) {
      throw new OutboxWriteError(aggregateLockTimeout(keys.map((key) => key.replace('\u001f', ' '))));
    }
  }

  /** After a commit or rollback: releases session locks once no transaction is active on the connection. */
  release(queryRunner: QueryRunner): Promise<void> | undefined {
    if (queryRunner.isTransactionActive) return undefined;
    const held = this.sessionLocks.get(queryRunner);
    if (!held || held.keys.size === 0 || !held.dialect.unlockAggregates) return undefined;
    this.sessionLocks.delete(queryRunner);
    const statement = held.dialect.unlockAggregates([...held.keys]);
    return queryRunner.query(statement.sql, statement.params).then(() => undefined);
  }

  private heldBy(queryRunner: QueryRunner, dialect: OutboxTableDialect): Set<string> {
    let held = this.sessionLocks.get(queryRunner);
    if (!held) {
      held = { dialect, keys: new Set() };
      this.sessionLocks.set(queryRunner, held);
    }
    return held.keys;
  }
}

// Kept here too: the writers import it from this file.
export { aggregateKey } from '../sql/aggregate-key';
