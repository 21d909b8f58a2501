import { OutboxConfigurationError } from './outbox.errors';
import { missingOptionalPackage } from './outbox.messages';

/**
 * The one loader of the library's optional peer dependencies (data layers, observability,
 * pg-logical-replication): a package is required the first time a feature that needs it is
 * configured or used, so that an app installs only what it uses. Packages used together load
 * together, and when some are missing the error names all of them, so that one install fixes it;
 * `missing` words it for the feature that asked.
 */
export function loadOptionalPeers<T extends unknown[]>(packageNames: { [K in keyof T]: string }, missing: (packageNames: string[]) => string): T {
  const absent: string[] = [];
  const loaded = packageNames.map((name) => {
    try {
      return require(name) as unknown;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') throw error;
      absent.push(name);
      return undefined;
    }
  });
  if (absent.length > 0) throw new OutboxConfigurationError(missing(absent));
  return loaded as T;
}

/**
 * One optional peer an `OutboxModule` option needs: the error names the package and the option, and
 * `otherwise` (default: turn the option off) for an option that has no "off", such as `delivery`.
 */
export function loadOptional<T>(packageName: string, option: string, otherwise?: string): T {
  return loadOptionalPeers<[T]>([packageName], () => missingOptionalPackage(packageName, option, otherwise))[0];
}
