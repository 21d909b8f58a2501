/**
 * A lock that one process holds across `dataSource.runMigrations()`, so that instances starting
 * together run their migrations one after the other. Held by a database session (or an open file)
 * of its own: when the process dies, the database (or the operating system) lets go of it.
 */
export interface MigrationLock {
  /** What is waited for, in an operator's words (names the lock and the database). */
  readonly description: string;
  /** How an operator finds who holds it. */
  readonly findHolder: string;
  /** Takes the lock if it is free; false when another session holds it. */
  tryAcquire(): Promise<boolean>;
  /** Waits for the lock up to `timeoutMs`; false when the time ran out. */
  acquire(timeoutMs: number): Promise<boolean>;
  /** Who holds the lock, when the database can tell. */
  holder(): Promise<string | undefined>;
  release(): Promise<void>;
  /** Gives the lock's connection (or file) back; safe to call twice. */
  close(): Promise<void>;
}
