/** A console request that cannot be done; `kind` maps to an HTTP status or a CLI exit code. */
export class ConsoleError extends Error {
  override readonly name = 'OutboxConsoleError';

  constructor(
    message: string,
    readonly kind: 'invalid' | 'not-found' | 'conflict',
    /** The request field at fault, for `invalid`. */
    readonly field?: string,
  ) {
    super(message);
  }
}
