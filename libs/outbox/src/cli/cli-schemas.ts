import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { OUTBOX_SCHEMAS, type CheckedSubject, type SchemasSource } from '../core/schema-registry/schemas-source';
import { CliError } from './cli.error';
import type { CliIo } from './cli-io';
import { inDescribedApp, rootModuleOf } from './cli-asyncapi';
import { appFileNotFound, missingApp, unexpectedArgument } from './cli-asyncapi.messages';
import { noSchemaRegistry, unknownSchemasCommand } from './cli-schemas.messages';

export const SCHEMAS_OPTIONS = {
  register: { type: 'boolean' },
} as const;

/**
 * `nest-outbox schemas check --app <file>`: the compatibility check the module runs at startup,
 * for a CI job, before a deploy: loads the app in describe mode (nothing is relayed, nothing is
 * registered), checks every event schema of every outbox against the registry, prints one line
 * per subject and exits 1 when one is incompatible. `--register` then registers them, for
 * registries where applications may not (`autoRegister: false`).
 */
export async function runSchemasCommand(args: string[], values: { app?: string; register?: boolean }, io: CliIo): Promise<number> {
  const [sub, extra] = args;
  if (sub !== 'check') throw new CliError(unknownSchemasCommand(sub));
  if (extra !== undefined) throw new CliError(unexpectedArgument(extra));
  if (!values.app) throw new CliError(missingApp('schemas check'));
  const path = resolve(values.app);
  if (!existsSync(path)) throw new CliError(appFileNotFound(values.app, 'schemas check'));
  const rootModule = await rootModuleOf(path, values.app, 'schemas check');
  return inDescribedApp(path, values.app, rootModule, io, 'schemas check', async (context) => {
    const sources = ([context.get(OUTBOX_SCHEMAS, { strict: false, each: true })].flat() as Array<SchemasSource | null>).filter((source): source is SchemasSource => source !== null);
    if (sources.length === 0) throw new CliError(noSchemaRegistry(values.app!));
    const checks = (await Promise.all(sources.map((source) => source.check()))).flat();
    checks.forEach((check) => io.out(line(check)));
    const refused = checks.filter((check) => check.status === 'incompatible');
    if (refused.length > 0) {
      io.err(`${refused.length} of ${checks.length} subjects refuse the app's schemas: nothing was registered.`);
      return 1;
    }
    if (values.register) {
      for (const source of sources) await source.prepare();
      io.err(`Registered the schemas of ${checks.length} subjects.`);
    }
    return 0;
  });
}

function line(check: CheckedSubject): string {
  const where = `${check.subject} (${check.format}, event "${check.eventType}")`;
  if (check.status === 'new') return `new           ${where}: no version yet`;
  if (check.status === 'unchanged') return `unchanged     ${where}: version ${check.latestVersion}`;
  if (check.status === 'compatible') return `compatible    ${where}: with version ${check.latestVersion} under ${check.level}`;
  return `INCOMPATIBLE  ${where}: with version ${check.latestVersion} under ${check.level}: ${check.problems.join('; ')}`;
}
