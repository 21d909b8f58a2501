/** Bad input or an unusable database: printed without a stack, exit code 2. */
export class CliError extends Error {
  override readonly name = 'CliError';
}
