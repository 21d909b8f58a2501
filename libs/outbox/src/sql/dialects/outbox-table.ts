import { OutboxConfigurationError } from '../../core/outbox.errors';
import { schemaNeedsPostgres } from '../../core/outbox.messages';
import { validateSchemaName, validateTableName } from '../../core/names';

/** Where an outbox table lives: its name and, on PostgreSQL, the schema that holds it. */
/** The outbox table's name unless `tableName` says otherwise. */
export const DEFAULT_OUTBOX_TABLE = 'outbox_messages';

export interface OutboxTableLocation {
  tableName: string;
  /** PostgreSQL schema of the table. Default: none, the connection's search_path decides. */
  schema?: string;
}

export type QuoteStyle = 'postgres' | 'sqlite' | 'mariadb';

/**
 * The names SQL knows an outbox table by. Every statement names the table, and the
 * paused-destinations table beside it, through this one value, so that a schema cannot be left out
 * of one of them. Both names are validated identifiers: quoting them never needs escaping.
 */
export class OutboxTable {
  private constructor(
    /** The table's own name, also the stem of its index and constraint names. */
    readonly name: string,
    readonly schema: string | undefined,
  ) {}

  /** Validates the names, which go into SQL text. An `OutboxTable` is returned as it is. */
  static of(location: string | OutboxTableLocation | OutboxTable): OutboxTable {
    if (location instanceof OutboxTable) return location;
    if (typeof location === 'string') return new OutboxTable(validateTableName(location), undefined);
    return new OutboxTable(validateTableName(location?.tableName), validateSchemaName(location?.schema));
  }

  /** As `of`, and refuses a schema where the database family has none to offer (only PostgreSQL has). */
  static on(driverType: string, location: string | OutboxTableLocation | OutboxTable): OutboxTable {
    const table = OutboxTable.of(location);
    if (table.schema !== undefined && driverType !== 'postgres') throw new OutboxConfigurationError(schemaNeedsPostgres(driverType, table.schema));
    return table;
  }

  /** `"schema"."name"`, or `"name"` alone where the connection's search_path decides; backticks on MariaDB. */
  quoted(style: QuoteStyle = 'postgres'): string {
    if (style === 'mariadb') return `\`${this.name}\``;
    return this.schema === undefined ? `"${this.name}"` : `"${this.schema}"."${this.name}"`;
  }

  /** `"name_suffix"`, unqualified: PostgreSQL puts indexes and constraints in their table's schema and takes no schema in their names. */
  quotedPart(suffix: string, style: QuoteStyle = 'postgres'): string {
    return style === 'mariadb' ? `\`${this.name}_${suffix}\`` : `"${this.name}_${suffix}"`;
  }

  /** The paused-destinations table, `<name>_paused`, in the same schema. */
  get paused(): OutboxTable {
    return new OutboxTable(`${this.name}_paused`, this.schema);
  }

  /** MariaDB/MySQL: the aggregate lock buckets, `<name>_locks` (see aggregate-lock-buckets.sql). */
  get locks(): OutboxTable {
    return new OutboxTable(`${this.name}_locks`, this.schema);
  }

  /** Claim-checked payloads, `<name>_payloads` (see PayloadTableSql). */
  get payloads(): OutboxTable {
    return new OutboxTable(`${this.name}_payloads`, this.schema);
  }

  /** PostgreSQL, WAL mode: the stream's saved positions, `<name>_wal_positions` (see WalPositionTable). */
  get walPositions(): OutboxTable {
    return new OutboxTable(`${this.name}_wal_positions`, this.schema);
  }

  /** PostgreSQL, WAL mode: messages the stream published, per minute and destination, `<name>_wal_published` (see StreamedCounts). */
  get walPublished(): OutboxTable {
    return new OutboxTable(`${this.name}_wal_published`, this.schema);
  }

  /** Another table in the same schema (PostgreSQL: a partition of this one). The name must be a valid identifier. */
  sibling(name: string): OutboxTable {
    return new OutboxTable(validateTableName(name), this.schema);
  }

  /** `schema.name` or `name`, for messages and TypeORM's `hasTable`. */
  toString(): string {
    return this.schema === undefined ? this.name : `${this.schema}.${this.name}`;
  }
}
