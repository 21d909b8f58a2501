import { OutboxConfigurationError } from './outbox.errors';
import { invalidOption } from './outbox.messages';
export { shownValue } from './shown-value';

/**
 * The rules for names that go into SQL text (tables, schemas) or to a broker (topics, queues,
 * subjects), shared by the module's options, the decorators, the exported factories and the CLI.
 */

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidOption(option, expected, got));
}

// eslint-disable-next-line no-control-regex -- the point is to find them
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** The longest name a table column holds (destinations, consumer names: `varchar(255)`). */
export const MAX_NAME_LENGTH = 255;

/** What a name an app or an operator passes may be, for error texts. */
export const nameRule = (max = MAX_NAME_LENGTH) => `a non-blank string of at most ${max} characters, without control characters (U+0000 to U+001F, U+007F)`;

export const DESTINATION_RULE = `a topic, queue or subject name: ${nameRule()}`;

/**
 * Why `value` cannot be a name (a consumer, a destination): not a string, empty or blank, a control
 * character (PostgreSQL refuses a NUL in text outright; a line break forges log lines), or longer
 * than the column; `undefined` when it can. Checked where the app or operator hands it over, so that
 * the error names the argument instead of surfacing as a database error.
 */
export function nameProblem(value: unknown, max = MAX_NAME_LENGTH): string | undefined {
  if (typeof value !== 'string') return `it is ${value === null ? 'null' : typeof value}, not a string`;
  if (value === '') return 'it is empty';
  if (value.trim() === '') return 'it is blank';
  const control = CONTROL_CHARACTER.exec(value);
  if (control) return `it contains the control character ${codePoint(control[0])} at index ${control.index}`;
  if (value.length > max) return `it has ${value.length} characters, more than ${max}`;
  return undefined;
}

function codePoint(character: string): string {
  return `U+${character.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** A destination no broker could take (blank, with a NUL or line break, longer than the column) is refused at startup, not at the first publish. */
export function isDestinationName(value: unknown): value is string {
  return nameProblem(value) === undefined;
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
