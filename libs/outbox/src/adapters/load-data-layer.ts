import { OutboxConfigurationError } from '../core/outbox.errors';
import { missingDataLayerPackage } from '../sql/sql-outbox.messages';

/**
 * Loads a data layer's package the first time a transaction of that layer is written through, so
 * that an app installs only the layers it uses (each is an optional peer of this library).
 * `missing` words the error for a use other than writing (a migration).
 */
export function loadDataLayer<T>(packageName: string, layer: string, missing: (packageName: string, layer: string) => string = missingDataLayerPackage): T {
  return loadDataLayers<[T]>([packageName], ([name]) => missing(name, layer))[0];
}

/**
 * Loads packages that are used together (typeorm with @nestjs/typeorm) and, when some are not
 * installed, fails once naming all of them, so that one install fixes it.
 */
export function loadDataLayers<T extends unknown[]>(packageNames: { [K in keyof T]: string }, missing: (packageNames: string[]) => string): T {
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
