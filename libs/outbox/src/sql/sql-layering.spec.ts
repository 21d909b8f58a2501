import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const SRC = resolve(__dirname, '..');

/** The packages a file loads at run time, following relative imports; `import type` is erased by the compiler. */
function runtimePackages(entry: string, seen = new Set<string>(), found = new Set<string>()): Set<string> {
  if (seen.has(entry)) return found;
  seen.add(entry);
  const source = readFileSync(entry, 'utf8');
  const imports = source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'";]*?\sfrom\s+)?'([^']+)'/gm);
  for (const [, specifier] of imports) {
    if (!specifier.startsWith('.')) {
      found.add(specifier);
      continue;
    }
    const file = join(dirname(entry), `${specifier}.ts`);
    if (existsSync(file)) runtimePackages(file, seen, found);
  }
  // Lazily loaded optional peers count too.
  for (const [, name] of source.matchAll(/loadDataLayer<[^>]*>\('([^']+)'/g)) found.add(`lazy:${name}`);
  return found;
}

describe('the data-layer write path loads no ORM up front', () => {
  it('(the scan sees what a file loads: the module loads Nest, and TypeORM through its writer)', () => {
    const packages = runtimePackages(join(SRC, 'nest', 'outbox.module.ts'));
    expect(packages.has('@nestjs/common') && packages.has('typeorm')).toBe(true);
  });

  it('sql/ loads neither Nest nor any data layer, TypeORM included', () => {
    const packages = ['sql-outbox.writer.ts', 'sql-inbox.ts'].flatMap((file) => [...runtimePackages(join(SRC, 'sql', file))]);
    expect(packages.filter((name) => /^(typeorm|@nestjs\/|kysely|drizzle-orm|@prisma\/|@mikro-orm\/|pg$)/.test(name))).toEqual([]);
  });

  it('adapters/ loads kysely and drizzle-orm only lazily, and nothing else of the layers', () => {
    const packages = [...new Set(['data-layer-transaction.ts', 'data-layer-inbox.ts'].flatMap((file) => [...runtimePackages(join(SRC, 'adapters', file))]))].sort();
    expect(packages.filter((name) => !name.startsWith('node:') && name !== 'uuid')).toEqual(['lazy:drizzle-orm', 'lazy:drizzle-orm/pg-core', 'lazy:kysely']);
  });
});
