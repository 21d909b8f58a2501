import type * as TypeOrm from 'typeorm';
import { loadDataLayer } from '../load-data-layer';
import { typeOrmNotInstalled } from './typeorm.messages';

/**
 * TypeORM's runtime classes, loaded when the TypeORM adapter first needs one: TypeORM is an optional
 * peer, so nothing that an app without it loads (the root, /core, /migrations, the CLI, a module with
 * `connection`) may import it up front. `usedBy` names the piece in the error when it is missing.
 */
export function loadTypeOrm(usedBy: string): typeof TypeOrm {
  return loadDataLayer<typeof TypeOrm>('typeorm', 'TypeORM', () => typeOrmNotInstalled(usedBy));
}
