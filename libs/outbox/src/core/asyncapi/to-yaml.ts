/**
 * YAML of a JSON value (the AsyncAPI document): block style, every string double-quoted as JSON
 * writes it, which YAML reads as the same string. No library: the document holds plain data only.
 */
export function toYaml(value: unknown): string {
  return `${block(value, 0).join('\n')}\n`;
}

function block(value: unknown, depth: number): string[] {
  const indent = '  '.repeat(depth);
  if (Array.isArray(value)) {
    if (value.length === 0) return [`${indent}[]`];
    return value.flatMap((item) => {
      const [first, ...rest] = nested(item, depth + 1);
      return [`${indent}- ${first.trimStart()}`, ...rest];
    });
  }
  if (isObject(value)) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return [`${indent}{}`];
    return entries.flatMap(([key, item]) => {
      const name = `${indent}${JSON.stringify(key)}:`;
      return isCollection(item) ? [name, ...block(item, depth + 1)] : [`${name} ${scalar(item)}`];
    });
  }
  return [`${indent}${scalar(value)}`];
}

// An item of a list: a collection starts on the dash's line.
function nested(item: unknown, depth: number): string[] {
  return isCollection(item) ? block(item, depth) : ['  '.repeat(depth) + scalar(item)];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCollection(value: unknown): boolean {
  return (Array.isArray(value) && value.length > 0) || (isObject(value) && Object.values(value).some((item) => item !== undefined));
}

function scalar(value: unknown): string {
  if (Array.isArray(value)) return '[]';
  if (isObject(value)) return '{}';
  return value === null || value === undefined ? 'null' : JSON.stringify(value);
}
