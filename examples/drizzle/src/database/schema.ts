import { integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';

// The app's own table. The outbox tables are not described here: drizzle/0001_outbox.sql creates them.
export const orders = pgTable('orders', {
  id: uuid('id').primaryKey(),
  customerId: text('customer_id').notNull(),
  totalCents: integer('total_cents').notNull(),
});
