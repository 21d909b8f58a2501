import { createHash } from 'node:crypto';

/**
 * The name of a statement, from its text: node-postgres prepares a name once per connection and
 * refuses the same name with another text, and the outbox INSERT's text varies with its row count
 * and whether it carries the NOTIFY.
 */
export function preparedStatementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `nest_outbox_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}

// Hashed once per text, not on every save. The texts are few: the relay's statements per table, and
// one outbox INSERT per row count (up to the writer's rows per INSERT), with or without the NOTIFY
// and the lock step.
const names = new Map<string, string>();

