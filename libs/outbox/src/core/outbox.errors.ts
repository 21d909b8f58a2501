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

/**
 * Thrown by a transport or an in-process handler for a message that can never succeed (a payload
 * the receiver rejects for good, a destination that does not exist): the row becomes dead at
 * once, with this error kept, instead of being retried `maxAttempts` times.
 */
export class OutboxNonRetryableError extends Error {
  override readonly name = 'OutboxNonRetryableError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
