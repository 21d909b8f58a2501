import { OutboxConfigurationError } from '../core/outbox.errors';
import { missingDataLayerPackage } from '../sql/sql-outbox.messages';

/**
 * Loads a data layer's package the first time a transaction of that layer is written through, so
 * that an app installs only the layers it uses (each is an optional peer of this library).
 * `missing` words the error for a use other than writing (a migration).
 */
export function loadDataLayer<T>(packageName: string, layer: string, missing: (packageName: string, layer: string) => string = missingDataLayerPackage): T {
  try {
    return require(packageName) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') throw new OutboxConfigurationError(missing(packageName, layer));
    throw error;
  }
}
