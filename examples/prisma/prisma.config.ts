import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? '' },
  // The outbox tables come from the migration nest-outbox wrote: `migrate dev` must not drop them.
  experimental: { externalTables: true },
  tables: { external: ['outbox_messages', 'outbox_messages_paused', 'outbox_messages_payloads'] },
});
