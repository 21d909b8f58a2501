/** Raised at startup for options that cannot work; the message names the option. */
export class OutboxConfigurationError extends Error {
  override readonly name = 'OutboxConfigurationError';
}

/** Raised by dead-letter operations that cannot apply; nothing was changed. */
export class OutboxAdminError extends Error {
  override readonly name = 'OutboxAdminError';

  constructor(
    message: string,
    /** `not-found` for an unknown id, `conflict` for a message that is not dead. */
    readonly reason: 'not-found' | 'conflict' | 'invalid',
  ) {
    super(message);
  }
}

/** Raised while writing events; the surrounding transaction rolls back. */
export class OutboxWriteError extends Error {
  override readonly name = 'OutboxWriteError';
}
