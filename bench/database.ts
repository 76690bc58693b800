// The PostgreSQL database the benchmarked service runs on: DATABASE_URL when it is given, otherwise a fresh database on
// the local server, dropped at the end so every run starts from the same freshly seeded catalogue.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  url: string;
  /** True when this run created the database (and drops it). */
  fresh: boolean;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: LOCAL_SERVER });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function openDatabase(givenUrl: string | undefined): Promise<BenchDatabase> {
  if (givenUrl) return { url: givenUrl, fresh: false, drop: async () => {} };
  const name = `storefront_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(LOCAL_SERVER);
  url.pathname = `/${name}`;
  return { url: url.toString(), fresh: true, drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
