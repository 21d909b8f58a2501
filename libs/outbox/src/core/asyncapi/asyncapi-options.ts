import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { OutboxConfigurationError } from '../outbox.errors';
import type { AsyncApiInfo } from './asyncapi-document.types';
import { invalidAsyncApiOption } from './asyncapi.messages';

/** `OutboxModule` option `asyncApi`: what the AsyncAPI document says of the app. */
export interface AsyncApiOptions {
  /** `info.title`. Default: the `name` of the app's package.json (found from the working directory up), else `'application'`. */
  title?: string;
  /** `info.version`. Default: the `version` of that package.json, else `'0.0.0'`. */
  version?: string;
  /** `info.description`, before the library's note of what the document leaves out. Default: the package.json's `description`. */
  description?: string;
  /** `servers` of the document, as AsyncAPI 3.0 Server Objects by name (e.g. `{ production: { host: 'kafka:9092', protocol: 'kafka' } }`). Default: none. */
  servers?: Record<string, Record<string, unknown>>;
}

export interface ResolvedAsyncApiOptions {
  info: AsyncApiInfo;
  servers?: Record<string, Record<string, unknown>>;
}

/** Checks the option and fills `info` from the nearest package.json. */
export function resolveAsyncApiOptions(options: AsyncApiOptions | undefined, fromDirectory: string = process.cwd()): ResolvedAsyncApiOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new OutboxConfigurationError(`OutboxModule option "asyncApi" must be an object { title?, version?, description?, servers? }, got ${JSON.stringify(options)}.`);
  }
  for (const key of ['title', 'version', 'description'] as const) {
    const value = options?.[key];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) throw new OutboxConfigurationError(invalidAsyncApiOption(key, 'a non-empty string', value));
  }
  const servers = options?.servers;
  if (servers !== undefined && (typeof servers !== 'object' || servers === null || Array.isArray(servers) || Object.values(servers).some((server) => typeof server !== 'object' || server === null))) {
    throw new OutboxConfigurationError(invalidAsyncApiOption('servers', 'an object of AsyncAPI Server Objects by name, e.g. { production: { host, protocol } }', servers));
  }
  const found = nearestPackage(fromDirectory);
  return {
    info: {
      title: options?.title ?? found?.name ?? 'application',
      version: options?.version ?? found?.version ?? '0.0.0',
      description: options?.description ?? found?.description,
    },
    servers,
  };
}

interface PackageFacts {
  name?: string;
  version?: string;
  description?: string;
}

function nearestPackage(directory: string): PackageFacts | undefined {
  for (let current = directory; ; current = dirname(current)) {
    const found = readPackage(join(current, 'package.json'));
    if (found) return found;
    if (dirname(current) === current) return undefined;
  }
}

function readPackage(path: string): PackageFacts | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
  const facts = parsed as Record<string, unknown>;
  return { name: text(facts.name), version: text(facts.version), description: text(facts.description) };
}
