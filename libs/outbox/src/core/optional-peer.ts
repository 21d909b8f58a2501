import { createRequire } from 'node:module';
import { OutboxConfigurationError } from './outbox.errors';
import { missingOptionalPackage } from './outbox.messages';

/**
 * The one loader of the library's optional peer dependencies (data layers, observability,
 * pg-logical-replication, NATS, validation, @nestjs-cls/transactional…): a package is required the
 * first time a feature that needs it is configured or used, so that an app installs only what it uses. Packages used together load
 * together, and when some are missing the error names all of them, so that one install fixes it;
 * `missing` words it for the feature that asked.
 */
export function loadOptionalPeers<T extends unknown[]>(packageNames: { [K in keyof T]: string }, missing: (packageNames: string[]) => string): T {
  const found = packageNames.map((name) => [name, findOptionalPeer(name)] as const);
  const absent = found.filter(([, loaded]) => loaded === undefined).map(([name]) => name);
  if (absent.length > 0) throw new OutboxConfigurationError(missing(absent));
  return found.map(([, loaded]) => loaded) as T;
}

/**
 * An optional peer that the feature asking can do without (or refuses in words of its own): the
 * package, or `undefined` when it is not installed. A package that is there but fails to load is
 * thrown, not taken for a missing one. `from`: resolve it from that file (the app's own copy)
 * rather than from this library.
 */
export function findOptionalPeer<T>(packageName: string, from?: string): T | undefined {
  try {
    return (from === undefined ? require(packageName) : createRequire(from)(packageName)) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return undefined;
  }
}

/**
 * A package an optional peer depends on, as that peer resolves it (its own copy): for code that
 * must work on the very values the peer does (the registry client's avsc and @bufbuild/protobuf).
 */
export function dependencyOfPeer<T>(peerName: string, dependency: string): T {
  return createRequire(require.resolve(peerName))(dependency) as T;
}

/**
 * One optional peer an `OutboxModule` option needs: the error names the package and the option, and
 * `otherwise` (default: turn the option off) for an option that has no "off", such as `delivery`.
 */
export function loadOptional<T>(packageName: string, option: string, otherwise?: string): T {
  return loadOptionalPeers<[T]>([packageName], () => missingOptionalPackage(packageName, option, otherwise))[0];
}
