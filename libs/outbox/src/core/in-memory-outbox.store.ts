import type { ClaimedMessage, NewOutboxMessage } from './outbox-message';
import type { ClaimRequest, FailedDelivery, OutboxStore } from './outbox-store.port';
import type { DestinationCounts, OutboxStatsSource } from './stats/outbox-stats.port';
import { countDestinations } from './stats/in-memory-counts';
import { orderingKey } from './batch-runs';
import type { InMemoryRow } from './in-memory-row';

/**
 * A store that keeps rows in memory and follows the same rules as the SQL stores. It serves
 * unit tests of code that drives a relay, and documents the store contract in plain code.
 */
export class InMemoryOutboxStore implements OutboxStore, OutboxStatsSource {
  readonly rows: InMemoryRow[] = [];
  private nextPosition = 1;

  constructor(private readonly now: () => number = Date.now) {}

  add(messages: NewOutboxMessage[]): void {
    for (const message of messages) {
      const nextAttemptAt = message.delayMs ? this.now() + message.delayMs : undefined;
      this.rows.push({ position: this.nextPosition++, message, status: 'pending', attempts: 0, createdAt: this.now(), nextAttemptAt });
    }
  }

  async claim({ owner, token, limit, leaseMs }: ClaimRequest): Promise<ClaimedMessage[]> {
    const now = this.now();
    const claimable: InMemoryRow[] = [];
    // The ordering rule: an aggregate's rows for a destination go out in order, so a claim takes a
    // run of them from the first unpublished one, up to the first it cannot take.
    const blocked = new Set<string>();
    for (const row of this.rows) {
      if (claimable.length === limit) break;
      if (row.status === 'published' || row.status === 'discarded') continue;
      const key = orderingKey(row.message);
      if (blocked.has(key)) continue;
      if (this.isClaimable(row, now)) claimable.push(row);
      else blocked.add(key);
    }
    for (const row of claimable) {
      row.leaseOwner = owner;
      row.leaseToken = token;
      row.leaseExpiresAt = now + leaseMs;
      row.attempts += 1;
    }
    return claimable.map(toClaimed);
  }

  async markPublished(token: string, positions: string[]): Promise<number> {
    const rows = this.holding(token, positions);
    for (const row of rows) {
      row.status = 'published';
      row.publishedAt = this.now();
      row.leaseOwner = row.leaseToken = row.leaseExpiresAt = undefined;
    }
    return rows.length;
  }

  async markFailed(token: string, failures: FailedDelivery[]): Promise<number> {
    let changed = 0;
    for (const failure of failures) {
      const [row] = this.holding(token, [failure.position]);
      if (!row) continue;
      row.lastError = failure.error;
      row.leaseOwner = row.leaseToken = row.leaseExpiresAt = undefined;
      if (failure.retryInMs === null) row.status = 'dead';
      else row.nextAttemptAt = this.now() + failure.retryInMs;
      changed++;
    }
    return changed;
  }

  async giveBack(token: string, positions: string[]): Promise<number> {
    const rows = this.holding(token, positions);
    for (const row of rows) {
      row.leaseOwner = row.leaseToken = row.leaseExpiresAt = undefined;
      row.attempts -= 1;
    }
    return rows.length;
  }

  async release(owner: string): Promise<number> {
    const rows = this.rows.filter((row) => row.leaseOwner === owner && row.status === 'pending');
    for (const row of rows) {
      row.leaseOwner = row.leaseToken = row.leaseExpiresAt = undefined;
      row.attempts -= 1;
    }
    return rows.length;
  }

  async readCounts(): Promise<DestinationCounts[]> {
    return countDestinations(this.rows, this.now());
  }

  private isClaimable(row: InMemoryRow, now: number): boolean {
    if (row.status !== 'pending') return false;
    if (row.nextAttemptAt !== undefined && row.nextAttemptAt > now) return false;
    return row.leaseExpiresAt === undefined || row.leaseExpiresAt <= now;
  }

  private holding(token: string, positions: string[]): InMemoryRow[] {
    const wanted = new Set(positions);
    return this.rows.filter((row) => wanted.has(String(row.position)) && row.leaseToken === token && row.status === 'pending');
  }
}

function toClaimed(row: InMemoryRow): ClaimedMessage {
  return { ...row.message, position: String(row.position), occurredAt: row.message.occurredAt.toISOString(), attempt: row.attempts };
}
