/** The migration lock was not free within `timeoutMs`: the message names the lock, its holder when known, and what to do. */
export class MigrationLockTimeoutError extends Error {
  override readonly name = 'MigrationLockTimeoutError';
}
