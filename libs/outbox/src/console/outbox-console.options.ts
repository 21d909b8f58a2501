import type { CanActivate, Type } from '@nestjs/common';
import { OutboxConfigurationError } from '../core/outbox.errors';
import { OUTBOX_NAME } from '../core/outbox-name';
import type { MessageDetail } from '../core/console/outbox-console.port';
import { consoleNeedsAuth, invalidConsoleOption, unknownConsoleOption } from './outbox-console.messages';
import { consoleTenantsWithOutbox } from './tenants/tenant-console.messages';

/** `OutboxConsoleModule.forRoot(options)`. The console is mounted only when this module is imported. */
export interface OutboxConsoleOptions {
  /** URL path of the page; the REST admin is under `<path>/api`. Default `'outbox'`. */
  path?: string;
  /**
   * The Nest guard every console route goes through (a class, resolved in the console's module, or
   * an instance). Required unless `noAuth` is set: throw `UnauthorizedException` for a missing
   * credential (401) and return `false` or throw `ForbiddenException` for a wrong one (403).
   */
  guard?: Type<CanActivate> | CanActivate;
  /** Serve the console with no authentication at all. For a local demo only: logs a warning at every start. Default `false`. */
  noAuth?: boolean;
  /** Hide every action (requeue, discard, pause, resume) on the page and answer 403 to them. Default `false`. */
  readOnly?: boolean;
  /**
   * Changes a payload before it leaves the server, to keep personal data off operators' screens.
   * Receives the parsed payload and the message; its result is shown instead. Default: shown as stored.
   */
  redactPayload?: (payload: unknown, message: MessageDetail) => unknown;
  /**
   * In an app with several outboxes, the name of the one this console shows (declared with
   * `OutboxModule.forRoot({ name })`); mount one console per outbox, each at its own `path`.
   * Default: the outbox declared without a name.
   */
  outbox?: string;
  /**
   * Show the outboxes of `OutboxTenantsModule` instead of an `OutboxModule`'s: a list of the tenants
   * at `path` (state, counts), and each tenant's console, as for one outbox, at `<path>/<tenant>/`.
   * Excludes `outbox`. Default `false`.
   */
  tenants?: boolean;
  /** Largest page of the message list. Default `200`. */
  maxPageSize?: number;
  /**
   * How often the page refreshes its figures and its message table by itself, in milliseconds
   * (from 1,000 to 3,600,000), and how soon it tries again when the app cannot be reached.
   * `0` turns it off (the Refresh button still works). Default `10_000`.
   */
  refreshIntervalMs?: number;
}

export interface ResolvedConsoleOptions {
  path: string;
  guard?: Type<CanActivate> | CanActivate;
  noAuth: boolean;
  readOnly: boolean;
  redactPayload: (payload: unknown, message: MessageDetail) => unknown;
  maxPageSize: number;
  refreshIntervalMs: number;
  outbox?: string;
  tenants: boolean;
}

/** Known keys, for the unknown-key check. */
export const CONSOLE_OPTION_KEYS = ['path', 'guard', 'noAuth', 'readOnly', 'redactPayload', 'maxPageSize', 'refreshIntervalMs', 'outbox', 'tenants'] as const;

const PATH = /^[A-Za-z0-9._~\-/]*$/;

export function resolveConsoleOptions(options: OutboxConsoleOptions = {}): ResolvedConsoleOptions {
  for (const key of Object.keys(options)) {
    if (!(CONSOLE_OPTION_KEYS as readonly string[]).includes(key)) throw new OutboxConfigurationError(unknownConsoleOption(key, CONSOLE_OPTION_KEYS));
  }
  const path = options.path ?? 'outbox';
  if (typeof path !== 'string' || !PATH.test(path)) fail('path', 'a URL path of letters, digits, -, _, ., ~ and /', path);
  if (options.noAuth !== undefined && typeof options.noAuth !== 'boolean') fail('noAuth', 'true or false', options.noAuth);
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean') fail('readOnly', 'true or false', options.readOnly);
  if (options.redactPayload !== undefined && typeof options.redactPayload !== 'function') fail('redactPayload', 'a function', options.redactPayload);
  const guard = options.guard;
  if (guard !== undefined && typeof guard !== 'function' && typeof (guard as CanActivate).canActivate !== 'function') {
    fail('guard', 'a Nest guard class or an object with canActivate()', guard);
  }
  if (!guard && options.noAuth !== true) throw new OutboxConfigurationError(consoleNeedsAuth());
  const maxPageSize = options.maxPageSize ?? 200;
  if (!Number.isInteger(maxPageSize) || maxPageSize < 1 || maxPageSize > 1_000) fail('maxPageSize', 'an integer from 1 to 1000', maxPageSize);
  const refreshIntervalMs = options.refreshIntervalMs ?? 10_000;
  if (!Number.isInteger(refreshIntervalMs) || (refreshIntervalMs !== 0 && (refreshIntervalMs < 1_000 || refreshIntervalMs > 3_600_000))) {
    fail('refreshIntervalMs', '0 (off) or an integer from 1000 to 3600000 (milliseconds)', refreshIntervalMs);
  }
  if (options.outbox !== undefined && (typeof options.outbox !== 'string' || !OUTBOX_NAME.test(options.outbox))) {
    fail('outbox', 'the name of an outbox declared with OutboxModule.forRoot({ name })', options.outbox);
  }
  if (options.tenants !== undefined && typeof options.tenants !== 'boolean') fail('tenants', 'true or false', options.tenants);
  if (options.tenants && options.outbox !== undefined) throw new OutboxConfigurationError(consoleTenantsWithOutbox());
  return {
    outbox: options.outbox,
    tenants: options.tenants ?? false,
    path: path.replace(/^\/+|\/+$/g, ''),
    guard,
    noAuth: options.noAuth === true && !guard,
    readOnly: options.readOnly ?? false,
    redactPayload: options.redactPayload ?? DEFAULT_REDACTION,
    maxPageSize,
    refreshIntervalMs,
  };
}

/** Shows payloads as stored. */
export const DEFAULT_REDACTION = (payload: unknown): unknown => payload;

function fail(option: string, expected: string, got: unknown): never {
  throw new OutboxConfigurationError(invalidConsoleOption(option, expected, got));
}
