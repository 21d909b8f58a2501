import type * as NestTypeOrm from '@nestjs/typeorm';
import { loadDataLayers } from '../adapters/load-data-layer';
import { typeOrmModeNotInstalled } from '../adapters/typeorm/typeorm.messages';

/**
 * @nestjs/typeorm for a module declared without `connection`, which is the app choosing TypeORM.
 * Both packages are optional peers: loaded here, on that choice only, and when either is missing
 * the module's declaration (forRoot, at bootstrap) fails naming what to install.
 */
export function loadTypeOrmMode(moduleName: string): typeof NestTypeOrm {
  return loadDataLayers<[unknown, typeof NestTypeOrm]>(['typeorm', '@nestjs/typeorm'], (missing) => typeOrmModeNotInstalled(moduleName, missing))[1];
}
