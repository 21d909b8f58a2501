import type { QueryRunner } from 'typeorm';
import { commitWrittenEvents } from '../core/aggregate-events';
import type { RecordedEvent } from '../core/recorded-events';
import type { FollowedTransactions } from '../adapters/data-layer.port';

interface StagedEvents {
  aggregate: object;
  events: RecordedEvent[];
  depth: number;
}

interface TransactionScope {
  depth: number;
  staged: StagedEvents[];
  wroteMessages: boolean;
  /** Depth of the (sub)transaction whose insert carried the notification; a rollback of that level discards it. */
  notifiedAt?: number;
}

/**
 * Follows each connection's transaction so that an aggregate's events are forgotten only once
 * the outermost transaction has committed, and kept when it (or the savepoint that wrote them)
 * rolls back, so that saving the aggregate again writes them again.
 */
export class OutboxTransactionTracker implements FollowedTransactions {
  private readonly scopes = new WeakMap<QueryRunner, TransactionScope>();

  started(queryRunner: QueryRunner): void {
    const scope = this.scopes.get(queryRunner);
    if (scope) scope.depth += 1;
    else this.scopes.set(queryRunner, { depth: 1, staged: [], wroteMessages: false });
  }

  isStaged(queryRunner: QueryRunner, recorded: RecordedEvent): boolean {
    return this.scopes.get(queryRunner)?.staged.some((entry) => entry.events.includes(recorded)) ?? false;
  }

  stage(queryRunner: QueryRunner, aggregate: object, events: RecordedEvent[]): void {
    const scope = this.scope(queryRunner);
    scope.staged.push({ aggregate, events, depth: scope.depth });
    scope.wroteMessages = true;
  }

  wrote(queryRunner: QueryRunner): void {
    this.scope(queryRunner).wroteMessages = true;
  }

  /** Whether this transaction still needs a notification: none sent yet, or the savepoint that sent it rolled back. */
  needsNotification(queryRunner: QueryRunner): boolean {
    return this.scope(queryRunner).notifiedAt === undefined;
  }

  notified(queryRunner: QueryRunner): void {
    const scope = this.scope(queryRunner);
    scope.notifiedAt = Math.min(scope.notifiedAt ?? scope.depth, scope.depth);
  }

  /** Returns true when the outermost transaction committed after outbox rows were written. */
  committed(queryRunner: QueryRunner): boolean {
    const scope = this.scope(queryRunner);
    scope.depth = Math.max(0, scope.depth - 1);
    if (queryRunner.isTransactionActive) {
      // A savepoint was released: what it staged (and the notification it sent) now belongs to the enclosing level.
      for (const entry of scope.staged) entry.depth = Math.min(entry.depth, scope.depth);
      if (scope.notifiedAt !== undefined) scope.notifiedAt = Math.min(scope.notifiedAt, scope.depth);
      return false;
    }
    const committed = new Map<object, Set<RecordedEvent>>();
    for (const { aggregate, events } of scope.staged) {
      const set = committed.get(aggregate) ?? new Set<RecordedEvent>();
      events.forEach((event) => set.add(event));
      committed.set(aggregate, set);
    }
    committed.forEach((events, aggregate) => commitWrittenEvents(aggregate, events));
    const wrote = scope.wroteMessages;
    this.scopes.delete(queryRunner);
    return wrote;
  }

  rolledBack(queryRunner: QueryRunner): void {
    const scope = this.scope(queryRunner);
    scope.depth = Math.max(0, scope.depth - 1);
    if (!queryRunner.isTransactionActive) {
      this.scopes.delete(queryRunner);
      return;
    }
    scope.staged = scope.staged.filter((entry) => entry.depth <= scope.depth);
    // PostgreSQL drops the notifications of a rolled-back savepoint with it.
    if (scope.notifiedAt !== undefined && scope.notifiedAt > scope.depth) scope.notifiedAt = undefined;
  }

  private scope(queryRunner: QueryRunner): TransactionScope {
    let scope = this.scopes.get(queryRunner);
    if (!scope) {
      scope = { depth: queryRunner.isTransactionActive ? 1 : 0, staged: [], wroteMessages: false };
      this.scopes.set(queryRunner, scope);
    }
    return scope;
  }
}
