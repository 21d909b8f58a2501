import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** docs/data-layers.md shows each data layer's example as the file the typecheck compiles and the layer's test runs. */
describe('docs/data-layers.md examples', () => {
  const readme = readFileSync(join(root, 'docs', 'data-layers.md'), 'utf8');

  it.each(['pg', 'prisma', 'drizzle', 'kysely', 'mikro-orm', 'inbox'])('shows test/data-layers/examples/%s.example.ts as it is', (layer) => {
    const source = readFileSync(join(__dirname, 'examples', `${layer}.example.ts`), 'utf8');
    // The file's first line says where it is used; the guide shows the rest.
    const shown = source.split('\n').slice(1).join('\n').trim();
    expect(readme).toContain(`\`\`\`ts\n${shown}\n\`\`\``);
  });
});
