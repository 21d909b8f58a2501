/** Raised at startup for options that cannot work; the message names the option. */
export class OutboxConfigurationError extends Error {
  override readonly name = 'OutboxConfigurationError';
}

/** Raised while writing events; the surrounding transaction rolls back. */
export class OutboxWriteError extends Error {
  override readonly name = 'OutboxWriteError';
}
