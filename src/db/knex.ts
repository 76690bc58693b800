// One Knex instance per process: PostgreSQL when DATABASE_URL is set, otherwise embedded PGlite (a real Postgres
// in-process) persisted in PGLITE_DIR. Both run the same migrations and the same SQL.
import { mkdirSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import type { Logger } from '../log.js';
import { migrationSource } from './migrations/index.js';
import { seedStore } from './seed.js';

// Amounts are stored as integer minor units; COUNT and SUM come back as int8, which pg returns as strings.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export type Db = Knex;

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  pgliteDir: string;
}

const FAIL_FAST_MS = 2_000;

function postgresConfig(databaseUrl: string): Knex.Config {
  return {
    client: 'pg',
    connection: { connectionString: databaseUrl, connectionTimeoutMillis: FAIL_FAST_MS },
    pool: { min: 0, max: 10, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: FAIL_FAST_MS,
  };
}

function pgliteConfig(dir: string): Knex.Config {
  // `memory://` keeps the database in memory (tests); anything else is a directory on disk.
  if (!dir.startsWith('memory://')) mkdirSync(dir, { recursive: true });
  return {
    client: ClientPgLite as unknown as typeof Knex.Client,
    connection: dir.startsWith('memory://') ? {} : ({ filename: dir } as Knex.StaticConnectionConfig),
  };
}

export function createDatabase(options: DatabaseOptions, log: Logger): Db {
  const config = options.databaseUrl ? postgresConfig(options.databaseUrl) : pgliteConfig(options.pgliteDir);
  // Knex reports pool and connection trouble through this logger rather than the console.
  const knexLog = { warn: (message: unknown) => log.warn({ knex: String(message) }, 'database'), error: (message: unknown) => log.error({ knex: String(message) }, 'database'), deprecate: () => {}, debug: () => {} };
  return knexFactory({ ...config, log: knexLog });
}

/** Brings the schema up to date and inserts the catalogue once; safe to run at every start and on many instances. */
export async function prepareDatabase(db: Db): Promise<void> {
  await whileHoldingMigrationLock(db, async () => {
    await db.migrate.latest({ migrationSource });
    await seedStore(db);
  });
}

/** Identifies this service's schema migrations among PostgreSQL advisory locks (any constant unique to the app). */
const MIGRATION_LOCK_KEY = 0x53_46_4d_47; // "SFMG"

/**
 * Instances starting together on a fresh PostgreSQL database would race to create knex's own bookkeeping tables
 * (knex's migration lock only works once they exist), so start-up migrations run under a session advisory lock held on
 * one pooled connection. PGlite belongs to one process (and has a single connection): nothing to serialise there.
 */
async function whileHoldingMigrationLock(db: Db, run: () => Promise<void>): Promise<void> {
  if (db.client.config.client !== 'pg') return run();
  const connection = await db.client.acquireConnection();
  try {
    await db.raw('select pg_advisory_lock(?)', [MIGRATION_LOCK_KEY]).connection(connection);
    await run();
  } finally {
    await db.raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]).connection(connection).catch(() => undefined);
    await db.client.releaseConnection(connection);
  }
}

/** Postgres "data exception" errors (SQLSTATE class 22: a NUL byte, an out-of-range number): the input's fault. */
export function isRejectedInput(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** Postgres and driver errors that mean "the database cannot be reached right now" (transient), not a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', '53300'].includes(code)) return true;
    if (code.startsWith('08') || code.startsWith('57P')) return true; // connection exceptions, operator intervention
  }
  return (
    error.name === 'KnexTimeoutError' ||
    /Connection terminated|connection timeout|Client has encountered a connection error|Timeout acquiring a connection/i.test(error.message)
  );
}
