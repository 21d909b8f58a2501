import type { OutboxMessageStatus } from '../../core/outbox-message';
import type {
  MessageDetail,
  MessageFilter,
  MessageSummary,
  OutboxConsoleStore,
  PausedDestination,
  ThroughputPoint,
} from '../../core/console/outbox-console.port';
import type { SqlRunner } from '../../core/sql-connection.port';
import type { ConsoleSql } from './console.sql';
import type { StreamedCounts } from '../streamed-counts';

/** The console's store (PostgreSQL, SQLite; MariaDB extends it), each statement outside application transactions. */
export class SqlOutboxConsoleStore implements OutboxConsoleStore {
  constructor(
    private readonly sql: ConsoleSql,
    private readonly runner: SqlRunner,
    /** PostgreSQL: what the WAL stream published, which has no rows (see StreamedCounts). */
    private readonly streamed?: StreamedCounts,
  ) {}

  async list(filter: MessageFilter, before: string | null, limit: number): Promise<MessageSummary[]> {
    return (await this.runner.rows(this.sql.list(filter, before, limit))).map(toSummary);
  }

  async get(id: string): Promise<MessageDetail | undefined> {
    const [row] = await this.runner.rows(this.sql.get(id));
    return row && toDetail(row);
  }

  async count(filter: MessageFilter): Promise<number> {
    const [row] = await this.runner.rows(this.sql.count(filter));
    return Number(row?.count ?? 0);
  }

  async requeueBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return (await this.runner.rows(this.sql.requeueBatch(filter, after, limit))).map((row) => String(row.position));
  }

  async discardBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return (await this.runner.rows(this.sql.discardBatch(filter, after, limit))).map((row) => String(row.position));
  }

  async retryNowBatch(filter: MessageFilter, after: string, limit: number): Promise<string[]> {
    return (await this.runner.rows(this.sql.retryNowBatch(filter, after, limit))).map((row) => String(row.position));
  }

  async destinationUsed(destination: string): Promise<boolean> {
    if ((await this.runner.rows(this.sql.destinationUsed(destination))).length > 0) return true;
    return this.streamed !== undefined && (await this.streamed.exist()) && (await this.runner.rows(this.streamed.destinationUsed(destination))).length > 0;
  }

  async throughput(minutes: number): Promise<ThroughputPoint[]> {
    const rows = await this.runner.rows(this.sql.throughput(minutes));
    if (this.streamed && (await this.streamed.exist())) rows.push(...(await this.runner.rows(this.streamed.throughput(minutes))));
    // A minute may come twice: from the table's rows and from the stream's counts.
    const byMinute = new Map<string, number>();
    for (const row of rows) byMinute.set(minuteOf(row.minute), (byMinute.get(minuteOf(row.minute)) ?? 0) + Number(row.published));
    return [...byMinute].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([minute, published]) => ({ minute, published }));
  }

  async paused(): Promise<PausedDestination[]> {
    return (await this.runner.rows(this.sql.pausedList())).map(toPaused);
  }

  async pause(destination: string, reason: string | null): Promise<boolean> {
    return (await this.runner.rows(this.sql.pause(destination, reason))).length > 0;
  }

  async resume(destination: string): Promise<boolean> {
    return (await this.runner.rows(this.sql.resume(destination))).length > 0;
  }
}

/** A row of the paused-destinations table, as the console and the stats show it. */
export function toPaused(row: Record<string, unknown>): PausedDestination {
  return { destination: String(row.destination), pausedAt: iso(row.pausedAt) ?? '', reason: row.reason === null || row.reason === undefined ? null : String(row.reason) };
}

/** ISO-8601 UTC from a `Date` (PostgreSQL) or UTC text 'YYYY-MM-DD HH:MM:SS.SSS' (SQLite). */
function iso(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  const text = String(value);
  return /^\d{4}-\d\d-\d\d \d/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
}

function minuteOf(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return `${String(value).replace(' ', 'T')}:00.000Z`;
}

function toSummary(row: Record<string, unknown>): MessageSummary {
  return {
    position: String(row.position),
    id: String(row.id),
    type: String(row.type),
    aggregateType: String(row.aggregateType),
    aggregateId: String(row.aggregateId),
    transport: String(row.transport),
    destination: String(row.destination),
    status: row.status as OutboxMessageStatus,
    attempts: Number(row.attempts),
    lastError: (row.lastError as string | null) ?? null,
    occurredAt: iso(row.occurredAt) ?? '',
    createdAt: iso(row.createdAt) ?? '',
    publishedAt: iso(row.publishedAt),
    deadAt: iso(row.deadAt),
  };
}

function toDetail(row: Record<string, unknown>): MessageDetail {
  return {
    ...toSummary(row),
    version: Number(row.version),
    correlationId: (row.correlationId as string | null) ?? null,
    causationId: (row.causationId as string | null) ?? null,
    tenantId: (row.tenantId as string | null) ?? null,
    headers: readable(row.headers, '{}', (value) => typeof value === 'object' && value !== null && !Array.isArray(value), (raw) => ({ '(unreadable headers)': raw })),
    payload: parsePayload(String(row.payload)),
    errors: readable(row.errorHistory, '[]', Array.isArray, (raw) => [{ at: '', error: `(unreadable error history) ${raw}` }]),
    nextAttemptAt: iso(row.nextAttemptAt),
    leaseOwner: (row.leaseOwner as string | null) ?? null,
    leaseExpiresAt: iso(row.leaseExpiresAt),
  };
}

// Headers and error history are JSON written by the outbox; a row changed by hand may hold anything,
// and the console must still show it (the relay dead-letters such a row, and an operator opens it).
function readable<T>(value: unknown, empty: string, accept: (parsed: unknown) => boolean, otherwise: (raw: string) => T): T {
  const raw = String(value ?? empty);
  try {
    const parsed: unknown = JSON.parse(raw);
    if (accept(parsed)) return parsed as T;
  } catch {
    // Not JSON: shown as text below.
  }
  return otherwise(raw);
}

// A payload is JSON written by the outbox; a row written by hand may not be, and is shown as text.
function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
