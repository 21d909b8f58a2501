/** A piece of SQL text, or the value of one placeholder. */
export type SqlPart = { text: string } | { value: unknown };

/**
 * Splits PostgreSQL SQL with numbered placeholders (`$1`, `$2`, …) into text and values in the
 * order the placeholders appear, for data layers that number (or mark with `?`) the parameters
 * themselves. A number used twice yields its value twice; `$` not followed by a digit (a JSON path
 * such as `'$[0]'`) stays text.
 */
export function splitPlaceholders(sql: string, params: readonly unknown[]): SqlPart[] {
  const parts: SqlPart[] = [];
  let last = 0;
  for (const match of sql.matchAll(/\$(\d+)/g)) {
    const index = Number(match[1]) - 1;
    if (index < 0 || index >= params.length) throw new RangeError(`SQL placeholder ${match[0]} has no parameter (${params.length} given)`);
    parts.push({ text: sql.slice(last, match.index) }, { value: params[index] });
    last = match.index + match[0].length;
  }
  parts.push({ text: sql.slice(last) });
  return parts;
}

/** The same statement with `?` placeholders and its values in placeholder order. */
export function toQuestionMarks(sql: string, params: readonly unknown[]): { sql: string; params: unknown[] } {
  const values: unknown[] = [];
  const text = splitPlaceholders(sql, params)
    .map((part) => {
      if ('text' in part) return part.text;
      values.push(part.value);
      return '?';
    })
    .join('');
  return { sql: text, params: values };
}

/**
 * Splits MariaDB/MySQL SQL with `?` placeholders into text and values, in order. Only for the
 * outbox's own statements, none of which has a `?` inside a string literal.
 */
export function splitQuestionMarks(sql: string, params: readonly unknown[]): SqlPart[] {
  const texts = sql.split('?');
  if (texts.length - 1 !== params.length) throw new RangeError(`SQL has ${texts.length - 1} placeholders for ${params.length} parameters`);
  return texts.flatMap((text, index) => (index < params.length ? [{ text }, { value: params[index] }] : [{ text }]));
}
