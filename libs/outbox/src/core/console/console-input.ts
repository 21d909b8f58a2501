/**
 * Input checks shared by the REST console and the CLI, so that both refuse the same values before
 * any reaches a database (where they would fail as errors, not as answers).
 */

/** The longest destination a paused-destinations row holds (`varchar(255)`). */
export const MAX_DESTINATION_LENGTH = 255;

const INSTANT = /^\d{4}-\d\d-\d\d([T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?)?$/;

/**
 * An ISO-8601 time that `Date` reads as a real instant between the years 1 and 9999 (every
 * database's timestamp column holds those); `undefined` for anything else.
 */
export function readInstant(text: string): Date | undefined {
  if (!INSTANT.test(text)) return undefined;
  const time = Date.parse(text);
  if (Number.isNaN(time)) return undefined;
  const year = new Date(time).getUTCFullYear();
  return year >= 1 && year <= 9999 ? new Date(time) : undefined;
}
