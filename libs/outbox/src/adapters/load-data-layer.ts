import { loadOptionalPeers } from '../core/optional-peer';
import { missingDataLayerPackage } from '../sql/sql-outbox.messages';

/**
 * Loads a data layer's package the first time a transaction of that layer is written through, so
 * that an app installs only the layers it uses (each is an optional peer of this library).
 * `missing` words the error for a use other than writing (a migration).
 */
export function loadDataLayer<T>(packageName: string, layer: string, missing: (packageName: string, layer: string) => string = missingDataLayerPackage): T {
  return loadDataLayers<[T]>([packageName], ([name]) => missing(name, layer))[0];
}

/** Packages used together (typeorm with @nestjs/typeorm), through the library's one loader of optional peers. */
export function loadDataLayers<T extends unknown[]>(packageNames: { [K in keyof T]: string }, missing: (packageNames: string[]) => string): T {
  return loadOptionalPeers<T>(packageNames, missing);
}
