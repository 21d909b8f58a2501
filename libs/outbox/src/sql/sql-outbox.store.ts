import { decodeHeaders } from '../core/row-decoding';
import type { ClaimedMessage } from '../core/outbox-message';
import type { ClaimRequest, FailedDelivery, OutboxStore, SettledAndClaimed } from '../core/outbox-store.port';
import type { OutboxRowRecord, OutboxSqlDialect } from './dialects/outbox-sql.dialect';
import type { SqlRunner } from '../core/sql-connection.port';
import type { PlannerStatistics } from './planner-statistics';

/** The outbox store over SQL: one statement per claim, per batch of successes, per batch of failures. */
export class SqlOutboxStore implements OutboxStore {
  /** Present where the dialect settles and claims in one statement (PostgreSQL). */
  readonly settleAndClaim?: (token: string, published: string[], next: ClaimRequest) => Promise<SettledAndClaimed>;

  constructor(
    private readonly dialect: OutboxSqlDialect,
    private readonly runner: SqlRunner,
    /** PostgreSQL: asked before the first claim, and told how long claims take and how many rows settles changed, to refresh stale statistics (a burst). */
    private readonly statistics?: PlannerStatistics,
  ) {
    const combined = dialect.settleAndClaim?.bind(dialect);
    if (combined) {
      this.settleAndClaim = async (token, published, { owner, token: nextToken, limit, leaseMs }) => {
        await this.statistics?.beforeClaim();
        const started = performance.now();
        const rows = await this.runner.rows(combined(token, published, owner, nextToken, limit, leaseMs));
        this.statistics?.noteClaim(performance.now() - started);
        const settled = Number(rows[0]?.settledCount ?? 0);
        this.statistics?.noteSettled(settled);
        // One row with null columns when nothing was claimed.
        const claimed = (rows as unknown as OutboxRowRecord[]).filter((row) => row.position !== null).map(toClaimedMessage);
        return { settled, claimed: claimed.sort((a, b) => comparePositions(a.position, b.position)) };
      };
    }
  }

  async claim({ owner, token, limit, leaseMs }: ClaimRequest): Promise<ClaimedMessage[]> {
    await this.statistics?.beforeClaim();
    const started = performance.now();
    const records = (await this.runner.rows(this.dialect.claim(owner, token, limit, leaseMs))) as unknown as OutboxRowRecord[];
    this.statistics?.noteClaim(performance.now() - started);
    // RETURNING gives no order guarantee; relays and tests reason in position order.
    return records.map(toClaimedMessage).sort((a, b) => comparePositions(a.position, b.position));
  }

  async markPublished(token: string, positions: string[]): Promise<number> {
    if (positions.length === 0) return 0;
    const settled = (await this.runner.rows(this.dialect.markPublished(token, positions))).length;
    this.statistics?.noteSettled(settled);
    return settled;
  }

  async markFailed(token: string, failures: FailedDelivery[]): Promise<number> {
    if (failures.length === 0) return 0;
    const settled = (await this.runner.rows(this.dialect.markFailed(token, failures))).length;
    this.statistics?.noteSettled(settled);
    return settled;
  }

  async giveBack(token: string, positions: string[]): Promise<number> {
    if (positions.length === 0) return 0;
    return (await this.runner.rows(this.dialect.giveBack(token, positions))).length;
  }

  async release(owner: string): Promise<number> {
    return (await this.runner.rows(this.dialect.release(owner))).length;
  }

  /** Fails with the database's error when the table is missing, so that startup can say what to do. */
  async probe(): Promise<void> {
    await this.runner.rows(this.dialect.probe());
  }
}

export function toClaimedMessage(record: OutboxRowRecord): ClaimedMessage {
  // Never throws: a row that cannot be read must not fail the claim of its neighbours.
  const { headers, problem } = decodeHeaders(record.headers);
  return {
    position: String(record.position),
    id: record.id,
    type: record.type,
    version: Number(record.version),
    aggregateType: record.aggregateType,
    aggregateId: record.aggregateId,
    transport: record.transport,
    destination: record.destination,
    occurredAt: record.occurredAt instanceof Date ? record.occurredAt.toISOString() : record.occurredAt,
    correlationId: record.correlationId ?? undefined,
    causationId: record.causationId ?? undefined,
    tenantId: record.tenantId ?? undefined,
    headers,
    payloadJson: record.payloadJson,
    attempt: Number(record.attempt),
    ...(record.errorHistory ? { errorHistory: record.errorHistory } : {}),
    ...(problem ? { decodeError: problem } : {}),
  };
}

function comparePositions(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
