import { randomBytes } from 'node:crypto';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { requireService } from './services';

/** Runs one statement on a PostgreSQL connection of its own; returns the number of rows. */
export async function postgresAdmin(url: string, sql: string): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/** Runs `sql` (one statement or several) on a PostgreSQL connection of its own; returns the rows of the last. */
export async function postgresRows(url: string, sql: string): Promise<Array<Record<string, unknown>>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query(sql);
    return (Array.isArray(result) ? result.at(-1) : result).rows;
  } finally {
    await client.end();
  }
}

/** A fresh PostgreSQL schema; connections reach it through `search_path`. */
export async function privatePostgresSchema(prefix: string): Promise<{ url: string; schema: string; drop(): Promise<void> }> {
  const url = requireService('postgres');
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  await postgresAdmin(url, `CREATE SCHEMA ${schema}`);
  return { url, schema, drop: () => dropSchema(url, schema) };
}

/**
 * DROP SCHEMA … CASCADE, again if PostgreSQL chose it as a deadlock's victim: a Nest microservice's
 * handler still in flight when its app closed (Nest does not wait for them) may write to a table of
 * the schema while the drop locks them one by one (seen once: the demo's TCP consumer, order_timeline).
 */
async function dropSchema(url: string, schema: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await postgresAdmin(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt === 5) throw error;
    }
  }
}

/** A fresh MariaDB database; `url` points at it. */
export async function privateMariaDbDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const server = requireService('mariadb');
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string) => {
    const connection = await createConnection(server);
    try {
      await connection.query(sql);
    } finally {
      await connection.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name}`) };
}
