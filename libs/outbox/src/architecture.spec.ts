import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const SRC = __dirname;

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
function importsUnder(folder: string): { file: string; target: string; own: boolean }[] {
  const found: { file: string; target: string; own: boolean }[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        const file = relative(SRC, path);
        for (const [, specifier] of readFileSync(path, 'utf8').matchAll(/^(?:import|export)\s(?:[^'";]*?\sfrom\s)?'([^']+)'/gm)) {
          const own = specifier.startsWith('.');
          found.push({ file, target: own ? relative(SRC, resolve(dirname(path), specifier)) : specifier, own });
        }
      }
    }
  };
  walk(join(SRC, folder));
  return found;
}

const ORMS = /^(typeorm|@nestjs\/typeorm|kysely|drizzle-orm|@prisma\/|@mikro-orm\/|pg$|pg-logical-replication|mysql2|better-sqlite3)/;

/**
 * The package's layers, lowest first: a file may import its own folder and the layers below it,
 * never a folder beside it on its own layer nor one above.
 */
const LAYERS: Record<string, number> = {
  core: 0,
  decorators: 1,
  sql: 1,
  transports: 1,
  // The Schema Registry serializers over @confluentinc/schemaregistry (their pure parts are in core/schema-registry/).
  'schema-registry': 1,
  // One folder per data layer, TypeORM's transaction bridge included, each behind data-layer.port.ts.
  adapters: 2,
  // The WAL delivery: the slot, the stream, its lock and saved position, its table overflow and its gauges.
  wal: 2,
  // TypeORM's integration over its adapter: the entity, the capture on save, the migrations and stores.
  typeorm: 3,
  // The delivery modes: the one file outside wal/ that knows the WAL delivery (delivery-modes.ts).
  delivery: 3,
  migrations: 3,
  cli: 4,
  nest: 5,
  console: 6,
  testing: 6,
};

/**
 * The entry points, the root's `index.ts` and one for each subpath that package.json exports: the
 * top layer. Each gathers what an application imports from wherever it lives (the observability
 * entry point hands out nest/observe's providers beside core/observe's pieces), and nothing in
 * the package imports one.
 */
const ENTRY_POINTS = Object.keys((JSON.parse(readFileSync(join(SRC, '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown> }).exports)
  .filter((subpath) => subpath === '.' || /^\.\/[a-z-]+$/.test(subpath))
  .map((subpath) => (subpath === '.' ? 'index.ts' : `${subpath.slice(2)}/index.ts`));

const layerOf = (path: string) => path.split('/')[0];
const isEntryPoint = (file: string) => ENTRY_POINTS.includes(file);
/** The files of a layer, its entry point aside: that one stands on the entry points' layer. */
const inside = (folder: string) => importsUnder(folder).filter(({ file }) => !isEntryPoint(file));
const ownFiles = <T extends { own: boolean }>(imports: T[]) => imports.filter(({ own }) => own);
const fileOf = (target: string) => [`${target}.ts`, `${target}/index.ts`].find((path) => existsSync(join(SRC, path)));

describe('the package reads one way: core ← sql ← adapters ← typeorm ← nest, deliveries beside, entry points on top', () => {
  it('(the scan sees imports: typeorm/ imports typeorm, nest/ imports Nest; the entry points are the exported ones)', () => {
    expect(importsUnder('typeorm').some(({ target }) => target === 'typeorm')).toBe(true);
    expect(importsUnder('nest').some(({ target }) => target === '@nestjs/common')).toBe(true);
    expect(ENTRY_POINTS).toEqual(expect.arrayContaining(['index.ts', 'observability/index.ts', 'typeorm/index.ts', 'core/index.ts']));
  });

  it('every folder is a layer or holds an entry point alone, and every entry point exists', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    const sources = (folder: string) => (readdirSync(join(SRC, folder), { recursive: true }) as string[]).filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'));
    const unplaced = folders.filter((folder) => !(folder in LAYERS) && sources(folder).some((name) => !isEntryPoint(`${folder}/${name}`)));
    expect(unplaced).toEqual([]);
    expect(ENTRY_POINTS.filter((entry) => !existsSync(join(SRC, entry)))).toEqual([]);
  });

  it('core/ imports nothing else of the package, no Nest, no ORM and no driver; not even types, not even in its entry point', () => {
    const outside = importsUnder('core').filter(({ target, own }) => (own && layerOf(target) !== 'core') || target.startsWith('@nestjs/') || ORMS.test(target));
    expect(outside).toEqual([]);
  });

  it('sql/ imports, even as types, nothing but core/, sql/ and Node: no ORM, no driver, no Nest', () => {
    const outside = importsUnder('sql').filter(({ target }) => !target.startsWith('core/') && !target.startsWith('sql/') && !target.startsWith('node:'));
    expect(outside).toEqual([]);
  });

  it('decorators/ only write metadata: they import core\'s metadata writers and the checks and texts of names and errors, nothing else', () => {
    const allowed = new Set(['core/event-metadata', 'core/outbox.errors', 'core/outbox.messages', 'core/names', 'core/aggregate-events']);
    expect(importsUnder('decorators').filter(({ target }) => !allowed.has(target))).toEqual([]);
  });

  it('cli/ imports neither nest/ nor a Nest package; adapters/ and typeorm/ import nothing of nest/', () => {
    const nest = [...inside('cli'), ...inside('adapters'), ...inside('typeorm')].filter(({ target, own }) => own && target.startsWith('nest/'));
    const nestPackages = [...inside('cli'), ...inside('adapters'), ...inside('typeorm')].filter(({ target }) => target.startsWith('@nestjs/'));
    expect([...nest, ...nestPackages]).toEqual([]);
  });

  it('wal/, the WAL delivery, knows neither Nest nor the layers that run it: nest/ makes it (OUTBOX_STREAM), cli/ reads it through delivery/', () => {
    const above = inside('wal').filter(({ target, own }) => target.startsWith('@nestjs/') || (own && ['nest', 'cli', 'console', 'migrations', 'delivery'].includes(layerOf(target))));
    expect(above).toEqual([]);
  });

  it('nothing outside wal/ imports wal/, not even types, but delivery/delivery-modes.ts: a second streaming source needs no other file to change', () => {
    const seam = 'delivery/delivery-modes.ts';
    const users = Object.keys(LAYERS).filter((layer) => layer !== 'wal').flatMap((layer) => importsUnder(layer));
    expect(users.some(({ file }) => file === seam)).toBe(true);
    expect(users.filter(({ file, target, own }) => own && layerOf(target) === 'wal' && file !== seam)).toEqual([]);
  });

  it('nothing but testing/ imports testing/', () => {
    const users = Object.keys(LAYERS).filter((layer) => layer !== 'testing').flatMap((layer) => importsUnder(layer)).filter(({ target, own }) => own && target.startsWith('testing/'));
    expect(users).toEqual([]);
  });

  it('no import runs from a lower layer to a higher one, nor between two folders of one layer', () => {
    const across = Object.keys(LAYERS).flatMap((layer) =>
      ownFiles(inside(layer)).filter(({ target }) => layerOf(target) !== layer && !(LAYERS[layerOf(target)] < LAYERS[layer]) && !isEntryPoint(fileOf(target) ?? '')),
    );
    expect(across).toEqual([]);
  });

  it('no file imports an entry point: they face the application, and the package imports the files behind them', () => {
    const users = ownFiles(importsUnder('.')).filter(({ target }) => isEntryPoint(fileOf(target) ?? ''));
    expect(users).toEqual([]);
  });

  it('the imports between the package\'s files form no circle', () => {
    const edges = new Map<string, string[]>();
    for (const { file, target } of ownFiles(importsUnder('.'))) {
      const to = fileOf(target);
      if (to) edges.set(file, [...(edges.get(file) ?? []), to]);
    }
    const circles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' → '));
        return;
      }
      state.set(file, 'open');
      for (const next of edges.get(file) ?? []) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of edges.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });
});

describe('the data-layer write path loads no ORM up front', () => {
  it('(the scan sees what a file loads: the module loads Nest, and TypeORM when it is chosen)', () => {
    const packages = runtimePackages(join(SRC, 'nest', 'outbox.module.ts'));
    expect(packages.has('@nestjs/common')).toBe(true);
    expect(['lazy:typeorm', 'lazy:@nestjs/typeorm'].filter((name) => !packages.has(name))).toEqual([]);
  });

  it('no entry point and not the CLI loads typeorm or @nestjs/typeorm up front: both are optional peers', () => {
    const entries = [...ENTRY_POINTS, 'cli/outbox-cli.main.ts'];
    const eager = entries.flatMap((entry) => [...runtimePackages(join(SRC, entry))].filter((name) => /^(typeorm|@nestjs\/typeorm)(\/|$)/.test(name)).map((name) => `${entry}: ${name}`));
    expect(eager).toEqual([]);
  });

  it('sql/ loads neither Nest nor any data layer, TypeORM included', () => {
    const packages = ['sql-outbox.writer.ts', 'sql-inbox.ts'].flatMap((file) => [...runtimePackages(join(SRC, 'sql', file))]);
    expect(packages.filter((name) => /^(typeorm|@nestjs\/|kysely|drizzle-orm|@prisma\/|@mikro-orm\/|pg$)/.test(name))).toEqual([]);
  });

  it('adapters/ loads kysely, drizzle-orm and typeorm only lazily, and nothing else of the layers', () => {
    const packages = [...new Set(['data-layer-transaction.ts', 'data-layer-inbox.ts'].flatMap((file) => [...runtimePackages(join(SRC, 'adapters', file))]))].sort();
    expect(packages.filter((name) => !name.startsWith('node:') && name !== 'uuid')).toEqual(['lazy:drizzle-orm', 'lazy:drizzle-orm/mysql-core', 'lazy:drizzle-orm/pg-core', 'lazy:kysely', 'lazy:typeorm']);
  });
});

describe('one loader loads every optional peer', () => {
  // The asyncapi command requires the application's own compiled file, by the path it was given: no peer.
  const LOADS_THE_APP = 'cli/cli-asyncapi.ts';
  const LOADER = 'core/optional-peer.ts';

  /** Each call that loads a module at run time (`require`, `require.resolve`, `import()`, `createRequire`), with what it is given. */
  const loadsIn = (file: string) =>
    [...readFileSync(join(SRC, file), 'utf8').matchAll(/(?<![\w.]|typeof )(require(?:\.resolve)?|import|createRequire)\(\s*([^)]*)\)/g)].map(([, call, argument]) => ({ file, call, argument }));
  const sources = [...new Set(importsUnder('.').map(({ file }) => file))];

  it('(the scan sees the loader\'s own require, and the console\'s lazy require of its own controller)', () => {
    expect(loadsIn(LOADER).map(({ call }) => call)).toContain('require');
    expect(loadsIn('console/outbox-console.module.ts').some(({ argument }) => argument.startsWith("'./"))).toBe(true);
  });

  it('no file but core/optional-peer.ts loads a package at run time: every other load names a file of the package itself', () => {
    const elsewhere = sources
      .filter((file) => file !== LOADER)
      .flatMap(loadsIn)
      .filter(({ file, call, argument }) => !(call !== 'createRequire' && /^'\.\.?\//.test(argument)) && !(file === LOADS_THE_APP && call === 'require' && argument === 'path'));
    expect(elsewhere).toEqual([]);
  });
});

describe('the cloudevents SDK is an optional peer', () => {
  const ALL = Object.keys(LAYERS);

  it('no file imports it (type imports aside): only transports/cloudevents/cloudevents.peer.ts loads it, when a destination asks for CloudEvents', () => {
    const files = [...new Set(ALL.flatMap((layer) => importsUnder(layer)).filter(({ target }) => target === 'cloudevents').map(({ file }) => file))];
    const eager = files.filter((file) => /^(?:import|export)\s+(?!type\b)[^;]*?from\s+'cloudevents'/m.test(readFileSync(join(SRC, file), 'utf8')));
    expect(eager).toEqual([]);
    expect(readFileSync(join(SRC, 'transports', 'cloudevents', 'cloudevents.peer.ts'), 'utf8')).toMatch(/loadOptionalPeers<\[CloudEventsSdk\]>\(\[CLOUDEVENTS_PACKAGE\]/);
  });

  it('the module, the root entry point and core/ do not load it at all', () => {
    const entries = ['index.ts', 'core/index.ts', 'nest/outbox.module.ts'];
    expect(entries.flatMap((entry) => [...runtimePackages(join(SRC, entry))].filter((name) => name === 'cloudevents').map((name) => `${entry}: ${name}`))).toEqual([]);
  });
});
