// `npm run bench:soak` (issue #12): does the database stop growing under a steady stream of anonymous writes? The
// built service runs on a fresh PostgreSQL database with every retention period shortened to a minute and a sweep
// every 15 s (the RETENTION_* settings, docs/operations.md "Retention"), while visitors keep registering OAuth
// clients, obtaining tokens, leaving agent carts open, leaving checkout sessions unpaid (created with an
// Idempotency-Key) and cancelling others. pg_database_size is sampled every 15 s; the series is printed with the
// verdict. A benchmark, not a test: it exits 0 whatever the figures, and 1 only when the harness itself fails.
//   --minutes <n>        how long the visitors keep coming (default 6)
//   --rate <n>           visitors per second (default 10; each makes 7 requests)
//   --sample <s>         seconds between samples (default 15)
// A RETENTION_* variable set in the environment wins over the soak's minute (RETENTION_UNPAID_SESSIONS_SECONDS=2592000
// shows the growth without that purge). Deleted rows only make room for new ones once vacuumed: on a server whose
// autovacuum is off (a test server's), the soak runs VACUUM every 60 s, as autovacuum's default naptime would.
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { positiveNumber } from './arguments.js';
import { openDatabase } from './database.js';
import { startServiceProcess } from './processes.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const logPath = 'bench/soak-service.log';

/** Every period a minute, swept every 15 s: the steady state comes within two minutes instead of 90 days. */
const SHORT_RETENTION: Record<string, string> = {
  RETENTION_SWEEP_SECONDS: '15',
  RETENTION_IDEMPOTENCY_SECONDS: '60',
  RETENTION_EXPIRED_TOKENS_SECONDS: '60',
  RETENTION_IDLE_CLIENTS_SECONDS: '60',
  RETENTION_OPEN_CARTS_SECONDS: '60',
  RETENTION_UNPAID_SESSIONS_SECONDS: '60',
  RETENTION_CANCELED_SESSIONS_SECONDS: '60',
};

/** Autovacuum's default naptime: how often the soak vacuums when the server does not. */
const VACUUM_EVERY_MS = 60_000;

/** The tables the visitors write to, counted at every sample. */
const TABLES = ['oauth_clients', 'oauth_tokens', 'carts', 'cart_line_items', 'idempotency_keys'] as const;

interface Sample {
  seconds: number;
  bytes: number;
  rows: Record<(typeof TABLES)[number], number>;
  visitors: number;
}

const ITEM = { id: 'variant_01tongue2pack', quantity: 1 };

/** One anonymous visitor: a client, two tokens, an open agent cart, an unpaid and a cancelled checkout session. */
async function visit(url: string): Promise<void> {
  const send = async (path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<any> => {
    const response = await fetch(`${url}${path}`, init);
    const text = await response.text();
    if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text);
  };
  const json = (body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const client = await send('/oauth/register', json({ scope: 'catalog:read cart:write' }));
  const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
  const tokenRequest = {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: `Basic ${basic}` },
    body: 'grant_type=client_credentials',
  };
  await send('/oauth/token', tokenRequest);
  const { access_token: token } = await send('/oauth/token', tokenRequest);
  await send('/agent/carts', json({ items: [{ variant_id: ITEM.id }] }, { Authorization: `Bearer ${token}` }));
  await send('/checkout_sessions', json({ items: [ITEM] }, { 'Idempotency-Key': randomUUID() }));
  const cancelled = await send('/checkout_sessions', json({ items: [ITEM] }));
  await send(`/checkout_sessions/${cancelled.id}/cancel`, { method: 'POST' });
}

/** Starts `rate` visitors a second until `until`; returns how many completed and the first failures. */
async function driveVisitors(url: string, rate: number, until: number, progress: { visitors: number }) {
  const failures: string[] = [];
  const running = new Set<Promise<void>>();
  let failed = 0;
  for (let next = Date.now(); next < until; next += 1000 / rate) {
    const wait = next - Date.now();
    if (wait > 0) await delay(wait);
    const visitor = visit(url).then(
      () => void progress.visitors++,
      (error: unknown) => {
        failed++;
        if (failures.length < 5) failures.push(String(error));
      },
    );
    running.add(visitor);
    void visitor.finally(() => running.delete(visitor));
  }
  await Promise.all(running);
  return { failed, failures };
}

async function sample(db: pg.Client, started: number, visitors: number): Promise<Sample> {
  const { rows: size } = await db.query<{ bytes: string }>('SELECT pg_database_size(current_database()) AS bytes');
  const counts: number[] = [];
  for (const table of TABLES) counts.push(Number((await db.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n));
  return {
    seconds: Math.round((Date.now() - started) / 1000),
    bytes: Number(size[0]!.bytes),
    rows: Object.fromEntries(TABLES.map((table, i) => [table, counts[i]!])) as Sample['rows'],
    visitors,
  };
}

/** Vacuums every VACUUM_EVERY_MS until `until` when the server's autovacuum is off; says which applies. */
async function vacuumLikeAutovacuum(db: pg.Client, until: number): Promise<string> {
  const { rows } = await db.query<{ autovacuum: string }>('SHOW autovacuum');
  if (rows[0]!.autovacuum === 'on') return "the server's autovacuum";
  const vacuuming = (async () => {
    while (Date.now() + VACUUM_EVERY_MS < until) {
      await delay(VACUUM_EVERY_MS);
      await db.query('VACUUM');
    }
  })();
  vacuuming.catch((error: unknown) => console.error('VACUUM failed:', error));
  return `VACUUM every ${VACUUM_EVERY_MS / 1000} s (the server's autovacuum is off)`;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);

function report(samples: Sample[]): string {
  const header = ['t (s)', 'visitors', 'db MB', ...TABLES].join('\t');
  const lines = samples.map((s) =>
    [s.seconds, s.visitors, mb(s.bytes), ...TABLES.map((table) => s.rows[table])].join('\t'),
  );
  // Levelled off: over the second half of the run the size grew by less than 5 % while the visitors kept coming.
  const half = samples[Math.floor(samples.length / 2)]!;
  const last = samples.at(-1)!;
  const growth = (last.bytes - half.bytes) / half.bytes;
  const first = samples[0]!;
  const verdict =
    `second half (${half.seconds}-${last.seconds} s): ${last.visitors - half.visitors} visitors, ` +
    `size ${mb(half.bytes)} -> ${mb(last.bytes)} MB (${(growth * 100).toFixed(1)} %); ` +
    `whole run: ${mb(first.bytes)} -> ${mb(last.bytes)} MB. ` +
    (growth < 0.05 ? 'Levelled off.' : 'Still growing.');
  return [header, ...lines, '', verdict].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { minutes: { type: 'string' }, rate: { type: 'string' }, sample: { type: 'string' } },
  });
  const minutes = positiveNumber(values.minutes, 6, 'minutes');
  const rate = positiveNumber(values.rate, 10, 'rate');
  const every = positiveNumber(values.sample, 15, 'sample') * 1000;
  const retention = Object.fromEntries(
    Object.entries(SHORT_RETENTION).map(([name, short]) => [name, process.env[name] || short]),
  );

  const database = await openDatabase(undefined);
  const service = await startServiceProcess({
    root,
    databaseEnv: database.env,
    logFile: logPath,
    env: { ...retention, REGISTRATIONS_PER_HOUR: '1000000' },
  });
  const db = new pg.Client({ connectionString: database.env.DATABASE_URL });
  const vacuumDb = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await db.connect();
  await vacuumDb.connect();
  try {
    const started = Date.now();
    const until = started + minutes * 60_000;
    const vacuum = await vacuumLikeAutovacuum(vacuumDb, until);
    console.log(`Soak: ${rate} visitors/s for ${minutes} min against ${service.url}; ${vacuum}; settings:`);
    console.log(
      Object.entries(retention)
        .map(([name, value]) => `  ${name}=${value}`)
        .join('\n'),
    );
    const progress = { visitors: 0 };
    const samples: Sample[] = [await sample(db, started, 0)];
    const drive = driveVisitors(service.url, rate, until, progress);
    while (Date.now() < until) {
      await delay(Math.min(every, until - Date.now()));
      const taken = await sample(db, started, progress.visitors);
      samples.push(taken);
      console.log(`${taken.seconds} s: ${mb(taken.bytes)} MB, ${taken.visitors} visitors`);
    }
    const { failed, failures } = await drive;
    console.log(`\n${report(samples)}`);
    if (failed) console.log(`${failed} visitors failed; the first: ${failures.join('\n')}`);
  } finally {
    await db.end();
    await vacuumDb.end();
    await service.stop();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
