// The database's own ceilings, measured with pgbench on the service's database in the same run (issue #15): how many
// sessions per second PostgreSQL stores when nothing but the storing is asked of it, and how many times per second it
// answers the statement that reads a session back. pgbench runs with the same number of clients as the load.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { SESSION_READ } from '../src/db/repositories/carts.js';

export interface PgbenchFigures {
  transactionsPerSecond: number;
  latencyAverageMs: number;
  failed: number;
}

const DEBIAN_ROOT = '/usr/lib/postgresql';

/** pgbench on PATH, or the newest one PostgreSQL's Debian packages install. */
function pgbenchPath(): string | undefined {
  const versions = existsSync(DEBIAN_ROOT) ? readdirSync(DEBIAN_ROOT) : [];
  const installed = versions
    .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }))
    .map((version) => join(DEBIAN_ROOT, version, 'bin', 'pgbench'));
  const onPath = (process.env.PATH ?? '').split(':').map((dir) => join(dir, 'pgbench'));
  return [...onPath, ...installed].find((path) => existsSync(path));
}

/** Why the pgbench ceilings cannot be measured here, or undefined when they can. */
export function pgbenchUnavailable(databaseUrl: string | undefined): string | undefined {
  if (!databaseUrl) return 'no pgbench ceiling on the embedded database';
  if (!pgbenchPath()) return 'pgbench not found (PATH or /usr/lib/postgresql/*/bin)';
  return undefined;
}

function parseOutput(output: string): PgbenchFigures {
  const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? Number.NaN);
  const transactionsPerSecond = number(/^tps = ([\d.]+)/m);
  if (!(transactionsPerSecond > 0)) throw new Error(`pgbench printed no tps:\n${output}`);
  return {
    transactionsPerSecond,
    latencyAverageMs: number(/^latency average = ([\d.]+) ms/m),
    failed: number(/^number of failed transactions: (\d+)/m) || 0,
  };
}

/** How long a pgbench run lasts: whole seconds, or a number of transactions per client. */
export type PgbenchSettings = { clients: number } & ({ seconds: number } | { transactionsPerClient: number });

/** One pgbench run of `script` (-M prepared: each statement is parsed once per client), `variables` bound by name. */
export async function runScript(
  databaseUrl: string,
  script: string,
  variables: Record<string, string>,
  settings: PgbenchSettings,
): Promise<PgbenchFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'storefront-pgbench-'));
  const file = join(dir, 'script.sql');
  writeFileSync(file, script);
  try {
    const { stdout } = await promisify(execFile)(
      pgbenchPath()!,
      [
        '--no-vacuum',
        '--protocol=prepared',
        `--client=${settings.clients}`,
        `--jobs=${Math.min(settings.clients, 2)}`,
        'seconds' in settings
          ? // pgbench counts whole seconds.
            `--time=${Math.max(1, Math.round(settings.seconds))}`
          : `--transactions=${settings.transactionsPerClient}`,
        `--file=${file}`,
        ...Object.entries(variables).map(([name, value]) => `--define=${name}=${value}`),
        databaseUrl,
      ],
      // The service's sessions run without JIT compilation (src/db/knex.ts): the ceiling's sessions too.
      { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PGOPTIONS: '-c jit=off' } },
    );
    return parseOutput(stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Carts pgbench stores are told apart by this prefix, so they can be removed from a database the run did not create. */
const PGBENCH_PREFIX = 'pgbench_';

/** The cart and its two lines pgbench stores, as every create stores them. */
const STORE_CART = `INSERT INTO carts (id, region_id, status, promo_codes, created_at, updated_at)
  VALUES ('cart_${PGBENCH_PREFIX}' || :n, :region, 'ready_for_payment', :codes, now(), now());
INSERT INTO cart_line_items (id, cart_id, variant_id, quantity, position)
  VALUES ('cali_${PGBENCH_PREFIX}1_' || :n, 'cart_${PGBENCH_PREFIX}' || :n, :variant1, 1, 0),
         ('cali_${PGBENCH_PREFIX}2_' || :n, 'cart_${PGBENCH_PREFIX}' || :n, :variant2, 1, 1);`;

/**
 * Where each create keeps its answer under its key: nowhere without a key (the checkout surface's create without
 * `Idempotency-Key` stores its cart and lines alone), the checkout surface's record, or the protocols'.
 */
const STORE_ANSWER = {
  none: '',
  checkout: `INSERT INTO idempotency_keys (scope, key, request_hash, state, status_code, response_body, api_version,
    created_at, expires_at)
  VALUES ('${PGBENCH_PREFIX}', :n, :hash, 'completed', 201, :body, :version, now(), now() + interval '1 day');`,
  protocol: `INSERT INTO protocol_idempotency (scope, key, request_hash, state, status_code, response_body,
    response_headers, created_at, expires_at)
  VALUES ('${PGBENCH_PREFIX}', :n, :hash, 'completed', 201, :body, '{}', now(), now() + interval '1 day');`,
};

/**
 * What a create stores, and only that, in one transaction: the cart, its lines, and (under a key) its key's record
 * whose answer is the one the service answered (`responseBody`: about 1 kB on the checkout surface, 2.5 kB on UCP,
 * 3.8 kB on ACP), in the table where that surface keeps it.
 */
function storeSessionScript(answer: StoredSession['answer']): string {
  return `\\set n random(1, 1000000000000000)
BEGIN;
${STORE_CART}
${STORE_ANSWER[answer]}
END;
`;
}

export interface StoredSession {
  regionId: string;
  variantIds: [string, string];
  promoCodes: string[];
  /** Where the create keeps its answer: `none`, `checkout` (idempotency_keys) or `protocol` (protocol_idempotency). */
  answer: keyof typeof STORE_ANSWER;
  /** The service's answer to the create, kept as the key's answer. */
  responseBody: string;
}

export function storeSessionCeiling(
  databaseUrl: string,
  session: StoredSession,
  settings: { clients: number; seconds: number },
): Promise<PgbenchFigures> {
  return runScript(
    databaseUrl,
    storeSessionScript(session.answer),
    {
      region: session.regionId,
      variant1: session.variantIds[0],
      variant2: session.variantIds[1],
      codes: `{${session.promoCodes.join(',')}}`,
      hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      body: session.responseBody,
      version: '2026-01-01',
    },
    settings,
  );
}

/**
 * The service's own statement that reads sessions (the repository's, not a copy), with `:ids` for its one parameter,
 * the array of ids: replayed with one id, as the service sends it for a read that arrives alone.
 */
function sessionReadScript(): string {
  if (!SESSION_READ.includes('$1') || SESSION_READ.includes('$2'))
    throw new Error('the session read should have exactly one parameter, $1');
  return `${SESSION_READ.replaceAll('$1', ':ids')};\n`;
}

export async function readSessionCeiling(
  databaseUrl: string,
  sessionId: string,
  settings: { clients: number; seconds: number },
): Promise<PgbenchFigures> {
  return runScript(databaseUrl, sessionReadScript(), { ids: `{${sessionId}}` }, settings);
}

/** Removes what the store ceiling wrote (for a database given in DATABASE_URL; a fresh one is dropped whole). */
export async function removeStoredSessions(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DELETE FROM cart_line_items WHERE cart_id LIKE 'cart_${PGBENCH_PREFIX}%'`);
    await client.query(`DELETE FROM carts WHERE id LIKE 'cart_${PGBENCH_PREFIX}%'`);
    await client.query(`DELETE FROM idempotency_keys WHERE scope = '${PGBENCH_PREFIX}'`);
    await client.query(`DELETE FROM protocol_idempotency WHERE scope = '${PGBENCH_PREFIX}'`);
  } finally {
    await client.end();
  }
}
