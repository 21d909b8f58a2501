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
  return { url, schema, drop: async () => void (await postgresAdmin(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`)) };
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
