// For tests of statement batching on PostgreSQL: hold a table behind a lock so that requests pile up deterministically,
// count the statements of one text the instances send, and cancel the statements waiting on the lock.
import pg from 'pg';
import { NEW_CART_READS } from '../../src/db/repositories/catalog.js';
import type { TestDatabase } from './database.js';
import type { TestService } from './service.js';

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rows of a statement run on the database under test (a pg client's or Knex's, as the test has one). */
export type RunSql = (text: string) => Promise<Array<Record<string, unknown>>>;

/** Resolves once `count` statements of the database `run` reaches wait on a lock; fails after 20 s of fewer. */
export async function lockWaiters(run: RunSql, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [row] = await run(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (Number(row?.n) >= count) return;
    await pause(20);
  }
  throw new Error(`fewer than ${count} statements waited on a lock within 20 s`);
}

/**
 * Counts the statements the instances send of this text, or whose text `text` accepts (those still running included).
 */
export function statementsSent(instances: TestService[], text: string | ((sql: string) => boolean)) {
  let sent = 0;
  const counted = typeof text === 'string' ? (sql: string) => sql === text : text;
  const count = (query: { sql?: string }) => {
    if (query.sql !== undefined && counted(query.sql)) sent++;
  };
  for (const api of instances) api.service.deps.db.on('query', count);
  return {
    get sent() {
      return sent;
    },
    async reach(target: number) {
      while (sent < target) await pause(5);
    },
    stop: () => instances.forEach((api) => api.service.deps.db.off('query', count)),
  };
}

/** Holds `table` in `mode` (`exclusive`: reads go on; `access exclusive`: every statement waits) until `release`, which may run SQL of its own first. */
export async function holdTable(database: TestDatabase, table: string, mode: 'exclusive' | 'access exclusive') {
  const client = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await client.connect();
  await client.query('begin');
  await client.query(`lock table ${table} in ${mode} mode`);
  return {
    async release(sql?: string) {
      if (sql) await client.query(sql);
      await client.query('commit');
      await client.end();
    },
  };
}

/** Cancels every statement waiting on a lock, again and again, until `pending` settles; then answers it. */
export async function cancelLockWaitersUntil<T>(database: TestDatabase, pending: Promise<T>): Promise<T> {
  let settled = false;
  const settling = pending.finally(() => (settled = true));
  const admin = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await admin.connect();
  while (!settled) {
    await admin.query(
      `select pg_cancel_backend(pid) from pg_stat_activity
       where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`,
    );
    await pause(20);
  }
  await admin.end();
  return settling;
}

/**
 * Changes the catalogue's version (as any change to what a create reads does), so that a create priced from an earlier
 * read is not stored and reads again: every create sent after this, to any instance on `api`'s database, reads.
 */
export async function changeCatalogVersion(api: TestService): Promise<void> {
  await api.service.deps.db.raw('update catalog_version set version = version + 1');
}

/**
 * Holds every create's read (they read promotions) behind a lock while `send` sends creates to `api`; once the first
 * read statement waits, cancels each statement waiting on the lock (the lone read's, then the batch's that queued
 * meanwhile) until every create is answered. The answers, and how many read statements carried them. Every create
 * reads (changeCatalogVersion), those like earlier ones included.
 */
export async function createsWithReadsCancelled<T>(
  database: TestDatabase,
  api: TestService,
  send: () => Array<Promise<T>>,
): Promise<{ answers: T[]; statements: number }> {
  await changeCatalogVersion(api);
  const held = await holdTable(database, 'promotions', 'access exclusive');
  const sent = statementsSent([api], NEW_CART_READS);
  const pending = Promise.all(send());
  await sent.reach(1);
  await pause(300);
  const answers = await cancelLockWaitersUntil(database, pending);
  await held.release();
  sent.stop();
  return { answers, statements: sent.sent };
}
