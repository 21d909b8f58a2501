import { ValidateBy, type ValidationOptions } from 'class-validator';
import { readInstant } from '../../core/console/console-input';

/** The largest position a table can hold (a signed 64-bit `bigint`). */
const MAX_POSITION = 9_223_372_036_854_775_807n;

// A NUL, a high surrogate without its low half, or a low one without its high half.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Text every database can take as a parameter: PostgreSQL refuses a NUL character in text, and an
 * unpaired surrogate (possible in JSON) is no character at all; either would fail in the database,
 * as a 500, instead of being refused here. No destination, type or aggregate id contains one.
 */
export function IsStorableText(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isStorableText',
      validator: {
        validate: (value) => typeof value !== 'string' || !UNSTORABLE.test(value),
        defaultMessage: (args) => `${args?.property} must not contain a NUL character (\\u0000) or an unpaired surrogate`,
      },
    },
    options,
  );
}

/**
 * An ISO-8601 time that is a real instant between the years 1 and 9999: `IsISO8601` alone lets
 * through forms such as `2026-W01` or `20260101` that `Date` cannot read, and years that no
 * database column holds.
 */
export function IsInstant(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isInstant',
      validator: {
        validate: (value) => typeof value === 'string' && readInstant(value) !== undefined,
        defaultMessage: (args) => `${args?.property} must be an ISO-8601 time such as 2026-01-31T12:00:00Z (years 1 to 9999)`,
      },
    },
    options,
  );
}

/** A keyset cursor: the `next` of a previous page, a position that fits the table's `bigint`. */
export function IsPosition(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPosition',
      validator: {
        validate: (value) => typeof value === 'string' && /^[0-9]{1,19}$/.test(value) && BigInt(value) <= MAX_POSITION,
        defaultMessage: (args) => `${args?.property} must be the "next" position of the previous page (a whole number up to ${MAX_POSITION})`,
      },
    },
    options,
  );
}
