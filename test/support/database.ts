// A fresh, empty database for each test file: a new PostgreSQL database when DATABASE_URL is set, otherwise an
// in-memory PGlite (or a directory, for restart tests).
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import pg from 'pg';
import { removeFolder, temporaryFolder } from './cleanup.js';

export interface TestDatabase {
  /** Environment for the service: DATABASE_URL or PGLITE_DIR. */
  env: { DATABASE_URL?: string; PGLITE_DIR?: string };
  kind: 'postgresql' | 'pglite';
  drop(): Promise<void>;
}

export const serverUrl = process.env.DATABASE_URL?.trim() || undefined;

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(options: { onDisk?: boolean } = {}): Promise<TestDatabase> {
  if (serverUrl) {
    const name = `storefront_test_${randomBytes(6).toString('hex')}`;
    await adminQuery(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return {
      env: { DATABASE_URL: url.toString() },
      kind: 'postgresql',
      drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }
  if (options.onDisk) {
    const dir = temporaryFolder('storefront-pglite-');
    return { env: { PGLITE_DIR: dir }, kind: 'pglite', drop: async () => removeFolder(dir) };
  }
  return { env: { PGLITE_DIR: 'memory://' }, kind: 'pglite', drop: async () => {} };
}

/** Every table reading a checkout session could touch (its cart, lines, prices, region, promotions, order). */
export const SESSION_READ_TABLES = [
  'carts',
  'cart_line_items',
  'variants',
  'variant_prices',
  'products',
  'regions',
  'promotions',
  'orders',
  'order_line_items',
];

/**
 * How many statements `db` sends that name one of `tables` while `run` runs. Only those: the instance's background
 * work (webhook delivery, retention) queries on its own clock.
 */
export async function statementsDuring(db: Knex, tables: string[], run: () => Promise<unknown>): Promise<number> {
  const touching = new RegExp(`\\b(${tables.join('|')})\\b`);
  let statements = 0;
  const count = ({ sql }: { sql: string }) => {
    if (touching.test(sql)) statements++;
  };
  db.on('query', count);
  try {
    await run();
    return statements;
  } finally {
    db.off('query', count);
  }
}
