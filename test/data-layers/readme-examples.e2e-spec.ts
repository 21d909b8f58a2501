import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** The README shows each data layer's example as the file the typecheck compiles and the layer's test runs. */
describe('README "Data layers beyond TypeORM" examples', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');

  it.each(['pg', 'prisma', 'drizzle', 'kysely', 'mikro-orm', 'inbox'])('shows test/data-layers/examples/%s.example.ts as it is', (layer) => {
    const source = readFileSync(join(__dirname, 'examples', `${layer}.example.ts`), 'utf8');
    // The file's first line says where it is used; the README shows the rest.
    const shown = source.split('\n').slice(1).join('\n').trim();
    expect(readme).toContain(`\`\`\`ts\n${shown}\n\`\`\``);
  });
});
