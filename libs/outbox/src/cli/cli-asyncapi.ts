import { existsSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describing } from '../core/asyncapi/describe-mode';
import { OUTBOX_ASYNCAPI, OUTBOX_NAMES, type AsyncApiSource, type OutboxNames } from '../core/asyncapi/asyncapi-source';
import { DEFAULT_OUTBOX_NAME, namedOutboxToken } from '../core/outbox-name';
import { toYaml } from '../core/asyncapi/to-yaml';
import { findOptionalPeer, loadOptional } from '../core/optional-peer';
import { CliError } from './cli.error';
import type { CliIo } from './cli-io';
import { appFailedToStart, appFileFailed, appFileNotFound, missingApp, noModuleExported, noOutboxModule, noSuchOutbox, severalOutboxes, unexpectedArgument } from './cli-asyncapi.messages';

export const ASYNCAPI_OPTIONS = {
  app: { type: 'string' },
  outbox: { type: 'string' },
  out: { type: 'string' },
  yaml: { type: 'boolean' },
} as const;

/** The part of an application context the commands that load the app use. */
export interface DescribedApp {
  get(token: symbol, options: { strict: false; each?: boolean }): unknown;
  close(): Promise<void>;
}

interface NestFactoryLike {
  createApplicationContext(module: unknown, options: object): Promise<DescribedApp>;
}

/**
 * `nest-outbox asyncapi --app <file>`: loads the app's root module with
 * `NestFactory.createApplicationContext`, in describe mode (the outbox starts no relay, stream or
 * cleanup; nothing connects to the broker), takes the document from `OutboxAsyncApi` and closes the
 * context. The app's own modules start as they would: its database is opened, its HTTP server and
 * microservices are not (a context has none).
 */
export async function runAsyncApiCommand(args: string[], values: { app?: string; outbox?: string; out?: string; yaml?: boolean }, io: CliIo): Promise<number> {
  if (args.length > 0) throw new CliError(unexpectedArgument(args[0]));
  if (!values.app) throw new CliError(missingApp());
  const path = resolve(values.app);
  if (!existsSync(path)) throw new CliError(appFileNotFound(values.app));
  const rootModule = await rootModuleOf(path, values.app);
  const document = await inDescribedApp(path, values.app, rootModule, io, 'asyncapi', (context) => sourceOf(context, values.app!, values.outbox).document());
  const text = values.yaml ? toYaml(document) : `${JSON.stringify(document, null, 2)}\n`;
  if (values.out) {
    writeFileSync(values.out, text);
    io.err(`Wrote the AsyncAPI document to ${values.out}.`);
  } else {
    io.out(text.trimEnd());
  }
  return 0;
}

/** The root module a compiled app file exports (`default`, `AppModule`, or a function that makes it). */
export async function rootModuleOf(path: string, shown: string, command = 'asyncapi'): Promise<unknown> {
  let exported: Record<string, unknown>;
  try {
    exported = require(path) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(appFileFailed(shown, error instanceof Error ? error.message : String(error), command));
  }
  const candidate = exported?.default ?? exported?.AppModule ?? (typeof exported === 'function' ? exported : undefined);
  if (candidate === undefined || candidate === null) throw new CliError(noModuleExported(shown, Object.keys(exported ?? {}), command));
  // A class is the module; any other function makes it (possibly async).
  const module = typeof candidate === 'function' && !isClass(candidate) ? await (candidate as () => unknown)() : candidate;
  if (!isClass(module) && !(typeof module === 'object' && module !== null && 'module' in module)) throw new CliError(noModuleExported(shown, Object.keys(exported), command));
  return module;
}

/**
 * Loads the app's root module in describe mode (`command` names what needs Nest in the error when
 * it is missing), hands the context to `use` and closes it.
 */
export async function inDescribedApp<T>(path: string, shown: string, rootModule: unknown, io: CliIo, command: string, use: (context: DescribedApp) => T | Promise<T>): Promise<T> {
  // The app's copy of Nest, so that its module metadata and ours are read by the same code.
  const core =
    findOptionalPeer<{ NestFactory: NestFactoryLike }>('@nestjs/core', path) ??
    loadOptional<{ NestFactory: NestFactoryLike }>('@nestjs/core', `${command} (the command loads your Nest app)`);
  let context: DescribedApp;
  try {
    // Nest's own log lines go to stderr: stdout carries the document.
    context = await describing(() => core.NestFactory.createApplicationContext(rootModule, { logger: stderrLogger(io), abortOnError: false }));
  } catch (error) {
    throw new CliError(appFailedToStart(shown, error instanceof Error ? error.message : String(error), command));
  }
  try {
    return await use(context);
  } finally {
    await context.close();
  }
}

/**
 * The document of one outbox: the one `--outbox` names (`default` for the one declared without a
 * name, as the metrics and the console call it), else the app's only one. Every OutboxModule
 * registers `OUTBOX_ASYNCAPI` inside itself, so with several a lookup by it alone would pick one by
 * chance: the app's list of outboxes says which there are.
 */
function sourceOf(context: DescribedApp, shown: string, outbox: string | undefined): AsyncApiSource {
  let declared: ReadonlyArray<string | undefined>;
  try {
    declared = (context.get(OUTBOX_NAMES, { strict: false }) as OutboxNames).declared();
  } catch {
    throw new CliError(noOutboxModule(shown));
  }
  const names = declared.map((name) => name ?? DEFAULT_OUTBOX_NAME);
  if (names.length === 0) throw new CliError(noOutboxModule(shown));
  if (outbox !== undefined && !names.includes(outbox)) throw new CliError(noSuchOutbox(shown, outbox, names));
  if (outbox === undefined && names.length > 1) throw new CliError(severalOutboxes(shown, names));
  const name = declared[outbox === undefined ? 0 : names.indexOf(outbox)];
  return context.get(name === undefined ? OUTBOX_ASYNCAPI : namedOutboxToken(OUTBOX_ASYNCAPI.description!, name), { strict: false }) as AsyncApiSource;
}

function stderrLogger(io: CliIo) {
  const line = (level: string) => (message: unknown, ...rest: unknown[]) => io.err(`[${level}] ${[message, ...rest].map(String).join(' ')}`);
  return { log: () => undefined, debug: () => undefined, verbose: () => undefined, warn: line('warn'), error: line('error'), fatal: line('fatal') };
}

function isClass(value: unknown): value is Function {
  return typeof value === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(value));
}
