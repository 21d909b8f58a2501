import type { DataSource, EntityManager, ObjectLiteral } from 'typeorm';
import { loadTypeOrm } from '../adapters/typeorm/typeorm.loader';

type AfterSave = (manager: EntityManager, entity: ObjectLiteral, target?: unknown) => Promise<void>;

const handlers = new WeakMap<DataSource, AfterSave[]>();
let installed = false;

/**
 * Runs `afterSave` for every entity passed to `save()` on `dataSource`, after TypeORM is done.
 *
 * Why a wrapper around `EntityManager.save`: when no column of an entity changed, TypeORM
 * returns before it opens a transaction or calls any subscriber, so no hook of its own sees the
 * save, and an event recorded before it would stay behind on the object, unwritten. Every save
 * (Repository, BaseEntity, transactional managers) goes through this one method. The wrapper is
 * installed once per process and does nothing for data sources without an outbox.
 */
export function guardUnchangedSaves(dataSource: DataSource, afterSave: AfterSave): () => void {
  handlers.set(dataSource, [...(handlers.get(dataSource) ?? []), afterSave]);
  install();
  return () => handlers.set(dataSource, (handlers.get(dataSource) ?? []).filter((handler) => handler !== afterSave));
}

function install(): void {
  if (installed) return;
  installed = true;
  // The class of the app's own typeorm: the one its data sources' managers are made of.
  const { EntityManager } = loadTypeOrm('The capture of unchanged saves');
  const save = EntityManager.prototype.save as (this: EntityManager, ...args: unknown[]) => Promise<unknown>;
  Object.defineProperty(EntityManager.prototype, 'save', {
    configurable: true,
    writable: true,
    value: async function saveAndCaptureUnchanged(this: EntityManager, ...args: unknown[]): Promise<unknown> {
      const result = await save.apply(this, args);
      const registered = handlers.get(this.connection);
      if (registered?.length) {
        const { target, entities } = savedEntities(args);
        for (const entity of entities) for (const handler of registered) await handler(this, entity, target);
      }
      return result;
    },
  });
}

// Mirrors EntityManager.save's overloads: save(entity|entities, options?) and save(target, entity|entities, options?).
function savedEntities(args: unknown[]): { target?: unknown; entities: ObjectLiteral[] } {
  const [first, second] = args;
  const isTarget =
    args.length > 1 &&
    (typeof first === 'function' || typeof first === 'string' || (first as { '@instanceof'?: symbol })?.['@instanceof'] === Symbol.for('EntitySchema'));
  const saved = isTarget ? second : first;
  const entities = (Array.isArray(saved) ? saved : [saved]).filter((entity): entity is ObjectLiteral => typeof entity === 'object' && entity !== null);
  return { target: isTarget ? first : undefined, entities };
}
