import { OutboxConfigurationError } from './outbox.errors';
import { invalidOption } from './outbox.messages';

/**
 * The rules for names that go into SQL text (tables, schemas) or to a broker (topics, queues,
 * subjects), shared by the module's options, the decorators, the exported factories and the CLI.
 */

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}

// eslint-disable-next-line no-control-regex -- the point is to find them
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;
export const DESTINATION_RULE = 'a topic, queue or subject name: not blank, no control characters';

/** A destination no broker could take (blank, or with a NUL or line break) is refused at startup, not at the first publish. */
export function isDestinationName(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '' && !CONTROL_CHARACTER.test(value);
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A plain SQL identifier (letters, digits and _, not starting with a digit, at most 63 characters). */
export function isIdentifier(value: unknown): value is string {
  return typeof value === 'string' && IDENTIFIER.test(value);
}

const IDENTIFIER_RULE = 'an identifier (letters, digits and _, not starting with a digit, at most 63 characters)';

/** Table names go into SQL text, so only plain identifiers are accepted. */
export function validateTableName(tableName: unknown): string {
  if (!isIdentifier(tableName)) fail('tableName', IDENTIFIER_RULE, tableName);
  return tableName;
}

/** A schema name goes into SQL text next to the table name, so it is held to the same rule. `undefined`: no schema. */
export function validateSchemaName(schema: unknown): string | undefined {
  if (schema !== undefined && !isIdentifier(schema)) fail('schema', `${IDENTIFIER_RULE}, or no value for the connection's search_path`, schema);
  return schema;
}
