import { Parser } from '@asyncapi/parser';

export interface Validated {
  errors: string[];
  /** Every diagnostic, as `severity code message at path` (severity 0 is an error). */
  all: string[];
}

/** Validates an AsyncAPI document (object, JSON or YAML text) with the AsyncAPI initiative's parser. */
export async function validateAsyncApi(document: unknown): Promise<Validated> {
  const { diagnostics } = await new Parser().parse(document as string);
  const shown = diagnostics.map((d) => `${d.severity} ${d.code} ${d.message} at ${d.path.join('/')}`);
  return { errors: shown.filter((line) => line.startsWith('0 ')), all: shown };
}
