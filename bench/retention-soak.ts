// `npm run bench:soak` (issue #12): does the database stop growing under a steady stream of anonymous writes? The
// built service runs on a fresh PostgreSQL database with every retention period shortened to a minute and a sweep
// every 15 s (the RETENTION_* settings, README "Retention"), while visitors keep registering OAuth clients, obtaining
// tokens, leaving agent carts open, leaving checkout sessions unpaid (created with an Idempotency-Key) and cancelling
// others. pg_database_size is sampled every 15 s; the series is printed with the verdict. A benchmark, not a test: it
// exits 0 whatever the figures, and 1 only when the harness itself fails.
//   --minutes <n>        how long the visitors keep coming (default 6)
//   --rate <n>           visitors per second (default 10; each makes 7 requests)
//   --sample <s>         seconds between samples (default 15)
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { openDatabase } from './database.js';
import { startServiceProcess } from './processes.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const logPath = 'bench/soak-service.log';

/** Every period a minute, swept every 15 s: the steady state comes within two minutes instead of 90 days. */
const SHORT_RETENTION = {
  RETENTION_SWEEP_SECONDS: '15',
  RETENTION_IDEMPOTENCY_SECONDS: '60',
  RETENTION_EXPIRED_TOKENS_SECONDS: '60',
  RETENTION_IDLE_CLIENTS_SECONDS: '60',
  RETENTION_OPEN_CARTS_SECONDS: '60',
  RETENTION_UNPAID_SESSIONS_SECONDS: '60',
  RETENTION_CANCELED_SESSIONS_SECONDS: '60',
};

/** The tables the visitors write to, counted at every sample. */
const TABLES = ['oauth_clients', 'oauth_tokens', 'carts', 'cart_line_items', 'idempotency_keys'] as const;

interface Sample {
  seconds: number;
  bytes: number;
  rows: Record<(typeof TABLES)[number], number>;
  visitors: number;
}

function positive(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
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
  const minutes = positive(values.minutes, 6, 'minutes');
  const rate = positive(values.rate, 10, 'rate');
  const every = positive(values.sample, 15, 'sample') * 1000;

  const database = await openDatabase(undefined);
  const service = await startServiceProcess({
    root,
    databaseEnv: database.env,
    logFile: logPath,
    env: { ...SHORT_RETENTION, REGISTRATIONS_PER_HOUR: '1000000' },
  });
  const db = new pg.Client({ connectionString: database.env.DATABASE_URL });
  await db.connect();
  try {
    console.log(
      `Soak: ${rate} visitors/s for ${minutes} min, retention periods 60 s, sweep every 15 s (${service.url})`,
    );
    const started = Date.now();
    const progress = { visitors: 0 };
    const samples: Sample[] = [await sample(db, started, 0)];
    const until = started + minutes * 60_000;
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
    await service.stop();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
