// One Knex instance per process: PostgreSQL when DATABASE_URL is set, otherwise embedded PGlite (a real Postgres
// in-process) persisted in PGLITE_DIR. Both run the same migrations and the same SQL.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '../log.js';
import { projectPath } from '../paths.js';
import { batchedStatements, BatchQueueTimeout, type BatchingOptions } from './batching.js';
import { migrationSource } from './migrations/index.js';
import { PglitePreparedClient } from './pglite-client.js';
import { seedStore } from './seed.js';
import { tracedClient } from './statement-spans.js';
import type { SpanLink, Tracing } from '../tracing.js';
import { Store, storeOf, storeOfClient, type StoreParams } from './store.js';

export type Db = Knex;

/**
 * Runs a hot statement as a named prepared statement: parsed once per pooled connection (node-postgres) or per PGlite
 * instance (PglitePreparedClient), and planned again only when Postgres's plan cache does not keep a generic plan. The
 * statement's text must never depend on its arguments (both clients reject a name that comes back with other text):
 * lists travel as one array parameter, `= any(?)`, never as `in (?, ?, …)`.
 */
export function asPrepared<Query extends Knex.QueryBuilder | Knex.Raw>(name: string, query: Query): Query {
  return query.options({ name }) as Query;
}

/**
 * Runs a statement written in PostgreSQL's own form (`$1` placeholders, text fixed) as the named prepared statement
 * `name`, on the pool's connection or the transaction's, without building a Knex query per call: on the session read,
 * the query builder, its option cloning and its runner cost as much CPU as pricing the cart. Knex still emits its
 * `query`, `query-error` and `query-response` events and prefixes errors with the statement, as for any query.
 */
export async function runPrepared<Row>(db: Db, name: string, sql: string, bindings: unknown[]): Promise<Row[]> {
  const client = db.client as Knex.Client & {
    query(connection: unknown, query: object): Promise<{ response: { rows: Row[] } }>;
  };
  const connection: unknown = await client.acquireConnection();
  try {
    const query = { method: 'raw', sql, bindings, options: { name } };
    const { rows } = (await client.query(connection, query)).response;
    client.emit('query-response', rows, query);
    return rows;
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * A statement written with Knex's `?` placeholders in PostgreSQL's own form (`$1`, `$2`, … in their order), for
 * runPrepared: converted once, where Knex's raw query would convert it on every call. The text must hold no other `?`
 * (no jsonb `?` operator).
 */
export function numberedPlaceholders(sql: string): string {
  // Knex reads `??` as an identifier and `\?` as a literal `?`: numbering them as values would bind the wrong text.
  if (/\?\?|\\\?/.test(sql)) throw new Error('numberedPlaceholders takes value placeholders only (no `??`, no `\\?`)');
  let position = 0;
  return sql.replace(/\?/g, () => `$${++position}`);
}

/**
 * Batched statements, traced: each item remembers the span it was asked for in (its request's); a statement that
 * carries several items is a span of its own, the root of a trace, linked to each of them, and its SQL statements are
 * its children. A lone item's statement stays in its request's trace.
 */
function tracedBatches<Item, Result>(
  statement: BatchingOptions<Item, Result>,
  tracing: Tracing,
): (item: Item) => Promise<Result> {
  type Traced = { item: Item; link: SpanLink | undefined };
  const run = batchedStatements<Traced, Result>({
    ...statement,
    one: ({ item }) => statement.one(item),
    many: (entries) => {
      const span = tracing.startSpan('batched statement', {
        kind: 'internal',
        root: true,
        attributes: { 'storefront.batch_size': entries.length },
        links: entries.flatMap(({ link }) => link ?? []),
      })!;
      return tracing
        .within(span, () => statement.many(entries.map(({ item }) => item)))
        .then(
          (results) => {
            span.end();
            return results;
          },
          (error: unknown) => {
            span.end(error);
            throw error;
          },
        );
    },
  });
  return (item) => run({ item, link: tracing.activeLink() });
}

/**
 * A kind of statement batched per database (src/db/batching.ts), run on the pool, never inside a transaction: an item
 * waits at most FAIL_FAST_MS for its place, as a query waits for a connection, and a failure that is the database's
 * (isDatabaseUnavailable) reaches every member of a batch as it would reach each alone. What this returns holds no
 * state: the batcher is the database's Store's (src/db/store.ts), built on first use. `statement` names the kind in
 * the metrics (how many items each of its statements carries).
 */
export function batchedPerDatabase<Item, Result>(
  statement: string,
  options: (
    db: Db,
  ) => Pick<BatchingOptions<Item, Result>, 'one' | 'many' | 'maxBatch' | 'maxInFlight' | 'eagerInFlight'>,
): (db: Db) => (item: Item) => Promise<Result> {
  const kind = {};
  const build = (db: Db) => {
    const batching = {
      ...options(db),
      queueTimeoutMs: FAIL_FAST_MS,
      onBatch: storeOf(db).metrics?.batch(statement),
      // A batch rolled back as a deadlock's victim or a serialization failure is retried member by member, as any
      // failure the members may not share; only a database out of reach fails them all.
      sharedFailure: (error: unknown) => isDatabaseUnavailable(error) && !isRolledBack(error),
    };
    const { tracing } = storeOf(db);
    return tracing ? tracedBatches(batching, tracing) : batchedStatements(batching);
  };
  return (db) => {
    // Its statements would run on the transaction's connection, for every later caller too.
    if (db.isTransaction) throw new Error('A batched statement runs on the pool, not inside a transaction');
    return storeOf(db).batcher(kind, () => build(db));
  };
}

/**
 * A read of rows by key (`sql` takes every key as one array parameter, `= any(…)`): outside a transaction batched per
 * database (batchedPerDatabase: a lone read goes at once, later ones share the next statement), inside one run alone
 * on the transaction's connection. Each key gets its row (the same row for a key asked twice) or undefined; the
 * statement always starts after the call, so it sees every write committed before.
 */
export function readByKey<Row>(statement: {
  name: string;
  sql: string;
  keyOf(row: Row): string;
  maxBatch: number;
  maxInFlight: number;
}): (db: Db, key: string) => Promise<Row | undefined> {
  async function read(db: Db, keys: readonly string[]): Promise<Array<Row | undefined>> {
    const rows = await runPrepared<Row>(db, statement.name, statement.sql, [[...new Set(keys)]]);
    const byKey = new Map(rows.map((row) => [statement.keyOf(row), row]));
    return keys.map((key) => byKey.get(key));
  }
  const batched = batchedPerDatabase<string, Row | undefined>(statement.name, (db) => ({
    one: async (key) => (await read(db, [key]))[0],
    many: (keys) => read(db, keys),
    maxBatch: statement.maxBatch,
    maxInFlight: statement.maxInFlight,
  }));
  return async (db, key) => (db.isTransaction ? (await read(db, [key]))[0] : batched(db)(key));
}

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  pgliteDir: string;
  /** PostgreSQL only; default 5 s. */
  databaseStatementTimeoutMs?: number;
}

/** How long a query may wait for a connection (or for a place in a batched statement, src/db/batching.ts). */
const FAIL_FAST_MS = 2_000;
/** How much longer than the server's statement timeout the driver waits for a reply before giving the socket up. */
const REPLY_GRACE_MS = 1_000;

interface PgConnection {
  readyForQuery?: boolean;
  connection?: { stream?: { destroy(): void } };
}

/**
 * A connection is reused only when it is idle. One whose query timed out on the driver's side (the server or a proxy
 * stopped answering) still waits for that reply; handed out again, it would stall every later query, so its socket
 * is destroyed (closing it politely would wait on the same silence) and the pool opens a fresh one.
 */
function reusable(connection: PgConnection): boolean {
  if (connection.readyForQuery) return true;
  connection.connection?.stream?.destroy();
  return false;
}

async function postgresConfig(databaseUrl: string, statementTimeoutMs: number): Promise<Knex.Config> {
  // node-postgres is loaded only for PostgreSQL: the embedded default's start does not need its ~25 modules.
  const { default: pg } = await import('pg');
  // Amounts are stored as integer minor units; COUNT and SUM come back as int8, which pg returns as strings.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
  return {
    client: 'pg',
    connection: {
      connectionString: databaseUrl,
      connectionTimeoutMillis: FAIL_FAST_MS,
      // The server cancels long statements; the driver stops waiting a little later, in case the server cannot say so.
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + REPLY_GRACE_MS,
      // No JIT compilation: once a table outgrows its statistics (a carts table of 400,000 rows that autovacuum has not
      // analysed yet), a statement's estimated cost passes jit_above_cost and PostgreSQL compiles it with LLVM on every
      // execution, 20-50 ms of CPU for a session read that takes 0.1 ms (docs/performance/README.md). Options in the
      // URL's query (`?options=...`) take precedence over this.
      options: '-c jit=off',
      // Detects peers that vanished without closing (a dead host, a NAT that dropped the flow).
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    },
    pool: { min: 0, max: 10, idleTimeoutMillis: 30_000, validate: reusable },
    acquireConnectionTimeout: FAIL_FAST_MS,
  };
}

/**
 * PGlite's Postgres takes the memory settings initdb wrote for a server (shared_buffers 128 MB and more, all inside
 * the process's WebAssembly heap). One embedded connection over a catalogue of a few rows needs a fraction of that;
 * these keep the heap at its 128 MB minimum, of which little is touched (RSS counts touched pages only). 8 MB of
 * shared buffers rather than 16 leaves room in the embedded default's 250 MB for `npm start`'s 8 MB semi-spaces, and
 * measured no slower (docs/performance/notebook.md, item 7).
 */
const PGLITE_SETTINGS = ['shared_buffers=8MB', 'max_connections=4', 'temp_buffers=2MB', 'wal_buffers=1MB'];

/** PGlite's initdb and its whole catalogue bootstrap, in a throwaway process with V8's default compiler settings. */
const INITDB_SCRIPT =
  "const { PGlite } = await import('@electric-sql/pglite'); const db = new PGlite(process.argv[1]); await db.waitReady; await db.close();";

/**
 * A new data directory is initialised in a child process: initdb inside the serving process would leave its
 * WebAssembly instance's memory behind (RSS over 500 MB, against under 200 MB when opening a ready directory), and
 * under `npm start`'s V8 flags (no baseline WebAssembly compiler) it would take minutes instead of seconds.
 */
async function initialisePgliteDir(dir: string): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  mkdirSync(dir, { recursive: true });
  await promisify(execFile)(process.execPath, ['--input-type=module', '-e', INITDB_SCRIPT, dir], {
    cwd: projectPath(),
    timeout: 300_000,
  });
}

async function pgliteConfig(dir: string): Promise<Knex.Config> {
  // `memory://` keeps the database in memory (tests); anything else is a directory on disk.
  const inMemory = dir.startsWith('memory://');
  if (!inMemory) await initialisePgliteDir(dir);
  const pglite = new PGlite(inMemory ? undefined : dir, {
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
  });
  return {
    // knex-pglite's client, with named statements (asPrepared, runPrepared) prepared as on PostgreSQL.
    client: PglitePreparedClient as unknown as typeof Knex.Client,
    connection: { pglite } as unknown as Knex.StaticConnectionConfig,
  };
}

/** A Knex client class whose driver call (`_query`, every statement, transactions' included) is timed. */
type ClientClass = new (config: Knex.Config) => Knex.Client;

/**
 * The client `config` names, as a subclass that records each statement's duration in the store's metrics: transaction
 * clients are made from the database's client class, so they time theirs too. Only when metrics are kept.
 */
async function timedStatements(config: Knex.Config): Promise<Knex.Config> {
  const Base: ClientClass =
    typeof config.client === 'function'
      ? (config.client as unknown as ClientClass)
      : // Knex's own PostgreSQL client (knex has no exports map; the dialect module has no typings).
        ((await import('knex/lib/dialects/postgres/index.js' as string)) as { default: ClientClass }).default;
  class Timed extends (Base as new (config: Knex.Config) => Knex.Client & {
    _query(connection: unknown, query: { sql: string; options?: { name?: string } }): Promise<unknown>;
  }) {
    // One reaction rather than an async function's promise and await: this runs for every statement.
    override _query(connection: unknown, query: { sql: string; options?: { name?: string } }) {
      const metrics = storeOfClient(this).metrics!;
      const started = performance.now();
      const timed = () => metrics.statement(query.sql, query.options?.name, (performance.now() - started) / 1000);
      return super._query(connection, query).then(
        (result) => {
          timed();
          return result;
        },
        (error: unknown) => {
          timed();
          throw error;
        },
      );
    }
  }
  return { ...config, client: Timed as unknown as typeof Knex.Client };
}

/** Opens the database with `store` as what the process keeps for it (statement batchers, prepared statements). */
export async function createDatabase(options: DatabaseOptions, log: Logger, store = new Store()): Promise<Db> {
  const opened = options.databaseUrl
    ? await postgresConfig(options.databaseUrl, options.databaseStatementTimeoutMs ?? 5_000)
    : await pgliteConfig(options.pgliteDir);
  const config = store.metrics ? await timedStatements(opened) : opened;
  // Knex reports pool and connection trouble through this logger rather than the console.
  const knexLog = {
    warn: (message: unknown) => log.warn({ knex: String(message) }, 'database'),
    error: (message: unknown) => log.error({ knex: String(message) }, 'database'),
    deprecate: () => {},
    debug: () => {},
  };
  // Knex keeps `userParams` in its client's configuration, which every transaction's client shares (its typings omit it).
  const userParams: StoreParams = { store };
  // With tracing on, each statement is a span (src/db/statement-spans.ts).
  if (store.tracing) {
    const base =
      config.client === 'pg'
        ? (await import('knex/lib/dialects/postgres/index.js')).default
        : (config.client as typeof Knex.Client);
    config.client = tracedClient(base, store.tracing);
  }
  return knexFactory({ ...config, log: knexLog, userParams } as Knex.Config);
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
const MIGRATION_LOCK_WAIT_MS = 5 * 60_000;

/**
 * Instances starting together on a fresh PostgreSQL database would race to create knex's own bookkeeping tables
 * (knex's migration lock only works once they exist), so start-up migrations run under a session advisory lock held on
 * one pooled connection. PGlite belongs to one process (and has a single connection): nothing to serialise there.
 */
async function whileHoldingMigrationLock(db: Db, run: () => Promise<void>): Promise<void> {
  if (db.client.config.client !== 'pg') return run();
  const connection = await db.client.acquireConnection();
  try {
    // Waiting for another instance's migrations is not one long query (the statement and query timeouts would cancel
    // it under load): poll with the non-blocking try-lock instead.
    const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS;
    for (;;) {
      const { rows } = (await db
        .raw('select pg_try_advisory_lock(?) as locked', [MIGRATION_LOCK_KEY])
        .connection(connection)) as { rows: Array<{ locked: boolean }> };
      if (rows[0]!.locked) break;
      if (Date.now() > deadline)
        throw new Error(`Another instance held the migration lock for ${MIGRATION_LOCK_WAIT_MS / 1000} s; giving up.`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await run();
  } finally {
    await db
      .raw('select pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY])
      .connection(connection)
      .catch(() => undefined);
    await db.client.releaseConnection(connection);
  }
}

/** Postgres "data exception" errors (SQLSTATE class 22: a NUL byte, an out-of-range number): the input's fault. */
export function isRejectedInput(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/**
 * A transaction PostgreSQL rolled back as a serialization failure (40001) or a deadlock's victim (40P01): the same
 * request sent again can pass.
 */
function isRolledBack(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
}

/** Postgres and driver errors that mean "the database cannot be reached right now" (transient), not a bad query. */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // 53300: too many connections; 57014: statement_timeout (the database is too slow to answer right now).
    if (
      ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH', '53300', '57014'].includes(code)
    )
      return true;
    if (isRolledBack(error)) return true;
    if (code.startsWith('08') || code.startsWith('57P')) return true; // connection exceptions, operator intervention
  }
  return (
    error.name === 'KnexTimeoutError' ||
    error instanceof BatchQueueTimeout ||
    // "timeout expired": node-postgres's connect timeout, when a new connection gets no greeting (a frozen host).
    /Connection terminated|connection timeout|timeout expired|Client has encountered a connection error|Timeout acquiring a connection|Query read timeout/i.test(
      error.message,
    )
  );
}
