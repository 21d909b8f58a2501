import type { ClaimCheckReference, ClaimedPayload } from '../../core/claim-check/claim-check-reference';
import { CLAIM_CHECK_DEFAULTS, type S3ClientLike } from '../../core/claim-check/claim-check-options';
import type { PayloadCollector, PayloadReader, PayloadStore } from '../../core/claim-check/payload-store.port';
import { loadOptional } from '../../core/optional-peer';
import type { SqlConnection } from '../../core/sql-connection.port';
import type { SqlTransaction } from '../../core/sql-transaction.port';
import type { OutboxTable } from '../../sql/dialects/outbox-table';
import { PayloadTableSql } from '../../sql/claim-check/payload-table.sql';

/** The name of the S3 store in references (`store`). */
export const S3_PAYLOAD_STORE = 's3';

/** The commands of `@aws-sdk/client-s3` the store sends, loaded only when the store is configured. */
interface S3Sdk {
  S3Client: new (config: Record<string, unknown>) => S3ClientLike;
  PutObjectCommand: new (input: Record<string, unknown>) => object;
  GetObjectCommand: new (input: Record<string, unknown>) => object;
  DeleteObjectCommand: new (input: Record<string, unknown>) => object;
  ListObjectsV2Command: new (input: Record<string, unknown>) => object;
}

export interface S3PayloadStoreOptions {
  bucket: string;
  /** Object keys are `<prefix><message id>`. */
  prefix: string;
  s3Client?: S3ClientLike;
  s3Config?: Record<string, unknown>;
  /** Cleanup deletes an object this old without a row. */
  orphanGraceMs?: number;
}

/** What the optional peer is needed for, for its error. */
const OPTION = 'claimCheck.store';

function loadSdk(): S3Sdk {
  return loadOptional<S3Sdk>('@aws-sdk/client-s3', OPTION, `set "claimCheck.store" to 'database'`);
}

/** Reads payloads from one bucket: what the inbox and other consumers need, without a database. */
export class S3PayloadReader implements PayloadReader {
  readonly name = S3_PAYLOAD_STORE;
  readonly location: string;
  protected readonly sdk = loadSdk();
  protected readonly client: S3ClientLike;

  constructor(protected readonly options: S3PayloadStoreOptions) {
    this.location = options.bucket;
    this.client = options.s3Client ?? new this.sdk.S3Client(options.s3Config ?? {});
  }

  async get(reference: ClaimCheckReference): Promise<string | undefined> {
    try {
      const object = (await this.client.send(new this.sdk.GetObjectCommand({ Bucket: this.options.bucket, Key: reference.key }))) as { Body?: { transformToString(encoding?: string): Promise<string> } };
      return await object.Body?.transformToString('utf8');
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }
}

/**
 * The S3 claim-check store. An object cannot join the caller's transaction, so it is put first
 * (before the rows, while the transaction is open) and a row of the payloads table records it in
 * the transaction. Retention deletes the objects of settled rows, then the rows; an object older
 * than the grace period without a row is an orphan of a transaction that never committed.
 */
export class S3PayloadStore extends S3PayloadReader implements PayloadStore {
  readonly keyPrefix: string;
  private readonly statements = new Map<string, PayloadTableSql>();
  /** The last object key the orphan collection settled (kept or deleted); the next run lists after it. */
  private settledUpTo: string | undefined;

  constructor(
    options: S3PayloadStoreOptions,
    private readonly table: OutboxTable,
  ) {
    super(options);
    this.keyPrefix = options.prefix;
  }

  async put(transaction: SqlTransaction, payloads: readonly ClaimedPayload[]): Promise<void> {
    const sql = this.sqlOf(transaction.dialect);
    for (const { reference, payloadJson } of payloads) {
      await this.client.send(
        new this.sdk.PutObjectCommand({ Bucket: this.options.bucket, Key: reference.key, Body: payloadJson, ContentType: 'application/json', Metadata: { sha256: reference.sha256 } }),
      );
      const { sql: text, params } = sql.insert(this.rowKey(reference.key), reference.bytes, reference.sha256, this.name, null);
      await transaction.execute(text, params);
    }
  }

  /** Cleanup's view of the store on `connection`: retention and orphans. */
  collector(connection: SqlConnection): PayloadCollector {
    return {
      deleteExpired: (olderThanMs, limit) => this.deleteExpired(connection, olderThanMs, limit),
      collectOrphans: () => this.collectOrphans(connection, this.options.orphanGraceMs ?? CLAIM_CHECK_DEFAULTS.orphanGraceMs),
    };
  }

  async deleteExpired(connection: SqlConnection, olderThanMs: number, limit: number): Promise<number> {
    const sql = this.sqlOf(connection.dialect);
    const keys = (await connection.runner().rows(sql.expiredKeys(this.name, olderThanMs, limit))).map((row) => String(row.payload_key));
    if (keys.length === 0) return 0;
    // Objects first: a run that stops between the two leaves rows, and the next run deletes again.
    for (const key of keys) await this.deleteObject(this.keyPrefix + key);
    await connection.run(sql.deleteKeys(keys));
    return keys.length;
  }

  /**
   * Lists the prefix, and deletes objects older than the grace period whose key has no row. Keys are
   * message ids (UUIDv7), so S3 lists them in the order they were made: a run stops at the first
   * object within the grace period, and the next run starts after the last one it settled, rather
   * than listing every object kept for retention each time.
   */
  async collectOrphans(connection: SqlConnection, orphanGraceMs: number): Promise<number> {
    const sql = this.sqlOf(connection.dialect);
    const cutoff = Date.now() - orphanGraceMs;
    let token: string | undefined;
    let deleted = 0;
    let reachedRecent = false;
    do {
      const page = (await this.client.send(
        new this.sdk.ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.keyPrefix, ContinuationToken: token, StartAfter: token ? undefined : this.settledUpTo }),
      )) as ListPage;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
      const old: string[] = [];
      for (const object of page.Contents ?? []) {
        // Only keys this store makes (a message id after the prefix); other objects under the prefix are left alone.
        if (!object.Key || !isMessageId(this.rowKey(object.Key))) continue;
        if (!object.LastModified || object.LastModified.getTime() >= cutoff) {
          reachedRecent = true;
          break;
        }
        old.push(object.Key);
      }
      if (old.length > 0) {
        const rowKeys = old.map((key) => this.rowKey(key));
        const committed = new Set((await connection.runner().rows(sql.existing(rowKeys))).map((row) => String(row.payload_key)));
        for (const key of rowKeys.filter((key) => !committed.has(key))) {
          await this.deleteObject(this.keyPrefix + key);
          deleted++;
        }
        this.settledUpTo = old[old.length - 1];
      }
    } while (token && !reachedRecent);
    return deleted;
  }

  private async deleteObject(key: string): Promise<void> {
    await this.client.send(new this.sdk.DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  private rowKey(objectKey: string): string {
    return objectKey.slice(this.keyPrefix.length);
  }

  private sqlOf(dialect: SqlTransaction['dialect']): PayloadTableSql {
    let sql = this.statements.get(dialect);
    if (!sql) this.statements.set(dialect, (sql = new PayloadTableSql(this.table, dialect)));
    return sql;
  }
}

interface ListPage {
  Contents?: Array<{ Key?: string; LastModified?: Date }>;
  IsTruncated?: boolean;
  NextContinuationToken?: string;
}

const MESSAGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isMessageId(key: string): boolean {
  return MESSAGE_ID.test(key);
}

function isNotFound(error: unknown): boolean {
  const candidate = error as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return candidate?.name === 'NoSuchKey' || candidate?.name === 'NotFound' || candidate?.$metadata?.httpStatusCode === 404;
}
