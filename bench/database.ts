// The database the benchmarked service runs on: DATABASE_URL when it is given, otherwise a fresh database on the local
// server, dropped at the end so every run starts from the same freshly seeded catalogue; or, with --embedded, a copy of
// the PGlite folder `npm ci` prepared (./.data), as a newcomer's `npm start` opens it.
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { DatabaseCpuProbe } from './load.js';
import { cpuMs } from './processes.js';

const LOCAL_SERVER = 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchDatabase {
  /** DATABASE_URL or PGLITE_DIR for the service. */
  env: Record<string, string>;
  kind: 'given' | 'fresh' | 'embedded';
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
  if (givenUrl) return { env: { DATABASE_URL: givenUrl }, kind: 'given', drop: async () => {} };
  const name = `storefront_bench_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(LOCAL_SERVER);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    kind: 'fresh',
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

export function copyEmbeddedDatabase(root: string): BenchDatabase {
  const prepared = join(root, '.data');
  if (!existsSync(join(prepared, 'PG_VERSION')))
    throw new Error(`${prepared} is not a prepared PGlite folder: run npm ci (or npm run prepare) first`);
  const dir = mkdtempSync(join(tmpdir(), 'storefront-bench-pglite-'));
  cpSync(prepared, dir, { recursive: true });
  return {
    env: { PGLITE_DIR: dir },
    kind: 'embedded',
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * CPU time of the PostgreSQL backends connected to the database (a server on this machine: their /proc entries are
 * readable), counted per backend from now on. A backend that exits before the count is taken is not counted, so this
 * suits the service's pool (its connections stay open), not pgbench's (its backends exit with it).
 */
export function databaseCpuProbe(databaseUrl: string): DatabaseCpuProbe {
  const backends = async (): Promise<Map<number, number>> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      return new Map(rows.flatMap(({ pid }) => (existsSync(`/proc/${pid}`) ? [[pid, cpuMs(pid)] as const] : [])));
    } finally {
      await client.end();
    }
  };
  return async () => {
    const before = await backends();
    return async () => {
      let used = 0;
      for (const [pid, cpu] of await backends()) used += cpu - (before.get(pid) ?? 0);
      return used;
    };
  };
}
