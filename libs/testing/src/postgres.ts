import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** The PostgreSQL the read-model suites create their databases on (`npm test` makes sure one answers). */
export const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A database of the test's own on `server` (default TEST_POSTGRES_URL's), and how to drop it (closing every connection to it first). */
export async function freshPostgresDatabase(label = 'test', server = TEST_POSTGRES_URL): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `agora_${label.replace(/[^a-z0-9]/gi, '').toLowerCase()}_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await admin(server, `CREATE DATABASE ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => dropPostgresDatabase(name, server) };
}

/** Drops a database of `server` (default TEST_POSTGRES_URL's), closing every connection to it first. */
export function dropPostgresDatabase(name: string, server = TEST_POSTGRES_URL): Promise<void> {
  return admin(server, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

async function admin(server: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
