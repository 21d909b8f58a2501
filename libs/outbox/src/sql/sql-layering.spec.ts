import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

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
    const file = [`${specifier}.ts`, join(specifier, 'index.ts')].map((path) => join(dirname(entry), path)).find((path) => existsSync(path));
    if (file) runtimePackages(file, seen, found);
  }
  // Lazily loaded optional peers count too.
  for (const [, name] of source.matchAll(/loadDataLayer<[^>]*>\('([^']+)'/g)) found.add(`lazy:${name}`);
  for (const [, names] of source.matchAll(/loadDataLayers<[^>]*>\(\[([^\]]*)\]/g)) for (const [, name] of names.matchAll(/'([^']+)'/g)) found.add(`lazy:${name}`);
  if (/\bloadTypeOrm\(/.test(source)) found.add('lazy:typeorm');
  return found;
}

/** Every import of every source file under `folder` (type imports too), as packages or paths relative to src/. */
function importsUnder(folder: string): { file: string; target: string }[] {
  const found: { file: string; target: string }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        const file = relative(SRC, path);
        for (const [, specifier] of readFileSync(path, 'utf8').matchAll(/^(?:import|export)\s(?:[^'";]*?\sfrom\s)?'([^']+)'/gm)) {
          found.push({ file, target: specifier.startsWith('.') ? relative(SRC, resolve(dirname(path), specifier)) : specifier });
        }
      }
    }
  };
  walk(join(SRC, folder));
  return found;
}

const ORMS = /^(typeorm|@nestjs\/typeorm|kysely|drizzle-orm|@prisma\/|@mikro-orm\/|pg$|mysql2|better-sqlite3)/;

describe('the folders read core ← sql ← adapters ← nest', () => {
  it('(the scan sees imports: typeorm/ imports typeorm, nest/ imports Nest)', () => {
    expect(importsUnder('typeorm').some(({ target }) => target === 'typeorm')).toBe(true);
    expect(importsUnder('nest').some(({ target }) => target === '@nestjs/common')).toBe(true);
  });

  it('sql/ imports, even as types, nothing but core/, sql/ and Node: no ORM, no driver, no Nest', () => {
    const outside = importsUnder('sql').filter(({ target }) => !target.startsWith('core/') && !target.startsWith('sql/') && !target.startsWith('node:'));
    expect(outside).toEqual([]);
  });

  it('core/ imports neither sql/, adapters/, typeorm/ nor nest/', () => {
    // The /core entry point re-exports sql/'s port types for data layers of one's own; `export type` is erased,
    // so /core still loads nothing of sql/ (the packaging test loads it alone at run time).
    const upward = importsUnder('core')
      .filter(({ file, target }) => !(file === 'core/index.ts' && target.startsWith('sql/')))
      .filter(({ target }) => /^(sql|adapters|typeorm|nest)\//.test(target) || ORMS.test(target) || target.startsWith('@nestjs/'));
    expect(upward).toEqual([]);
  });

  it('adapters/ and typeorm/ import nothing of nest/ and no Nest package', () => {
    const nest = [...importsUnder('adapters'), ...importsUnder('typeorm')].filter(({ target }) => target.startsWith('nest/') || target.startsWith('@nestjs/'));
    expect(nest).toEqual([]);
  });
});

describe('the data-layer write path loads no ORM up front', () => {
  it('(the scan sees what a file loads: the module loads Nest, and TypeORM when it is chosen)', () => {
    const packages = runtimePackages(join(SRC, 'nest', 'outbox.module.ts'));
    expect(packages.has('@nestjs/common')).toBe(true);
    expect(['lazy:typeorm', 'lazy:@nestjs/typeorm'].filter((name) => !packages.has(name))).toEqual([]);
  });

  it('no entry point and not the CLI loads typeorm or @nestjs/typeorm up front: both are optional peers', () => {
    const entries = ['index.ts', 'cli/outbox-cli.main.ts', ...['core', 'sql', 'testing', 'console', 'observability', 'typeorm', 'migrations'].map((folder) => `${folder}/index.ts`)];
    const eager = entries.filter((entry) => existsSync(join(SRC, entry))).flatMap((entry) => [...runtimePackages(join(SRC, entry))].filter((name) => /^(typeorm|@nestjs\/typeorm)(\/|$)/.test(name)).map((name) => `${entry}: ${name}`));
    expect(eager).toEqual([]);
  });

  it('sql/ loads neither Nest nor any data layer, TypeORM included', () => {
    const packages = ['sql-outbox.writer.ts', 'sql-inbox.ts'].flatMap((file) => [...runtimePackages(join(SRC, 'sql', file))]);
    expect(packages.filter((name) => /^(typeorm|@nestjs\/|kysely|drizzle-orm|@prisma\/|@mikro-orm\/|pg$)/.test(name))).toEqual([]);
  });

  it('adapters/ loads kysely and drizzle-orm only lazily, and nothing else of the layers', () => {
    const packages = [...new Set(['data-layer-transaction.ts', 'data-layer-inbox.ts'].flatMap((file) => [...runtimePackages(join(SRC, 'adapters', file))]))].sort();
    expect(packages.filter((name) => !name.startsWith('node:') && name !== 'uuid')).toEqual(['lazy:drizzle-orm', 'lazy:drizzle-orm/mysql-core', 'lazy:drizzle-orm/pg-core', 'lazy:kysely']);
  });
});
