// The service beside an ALREADY RUNNING Medusa v2 store (issue #30 item 7), on the same machine, in one run: round after
// round, each pair of equivalent operations is loaded on this service, then on Medusa, with the same load generator and
// connections (bench/load.ts). This script neither installs nor builds Medusa: docs/performance/README.md ("Medusa v2 on
// the same machine") says how to get one running. This service is started from dist/ (`npm run build` first) on a fresh
// database of the local PostgreSQL, dropped at the end. A benchmark, not a test: it exits 0 whatever the figures.
//   npx tsx bench/medusa.ts --medusa-url http://127.0.0.1:9000 --publishable-key pk_...
//     [--medusa-pid <pid>]   the Medusa process, to read its CPU time per request too
//     [--medusa-version <v>] recorded in bench/medusa-results.json
//     [--rounds 3] [--duration 10] [--warmup 3] [--connections 8]
// 8 connections rather than the bench's 32: at 32 a Medusa cart create waits behind up to 31 others, near autocannon's
// 10 s time-out, and a run counts few or none of its answers.
// Pairs (ours / Medusa's, the ratio being ours divided by Medusa's requests per second):
//   GET /api/store/products (cached)            / GET /store/products (region, priced variants, stock, limit 2)
//   GET /api/store/products, each read new      / the same Medusa list (Medusa caches nothing by default)
//   POST /checkout_sessions (2 items, 10OFF)    / POST /store/carts (region, 2 line items)
//   GET /checkout_sessions/{id}                 / GET /store/carts/{id}
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { positiveNumber } from './arguments.js';
import { openDatabase } from './database.js';
import { measure, type Load, type Measurement } from './load.js';
import { startServiceProcess, type ServerProcess } from './processes.js';
import { missingReads, productList, sessionCreation, sessionId, sessionRead } from './rows.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsPath = 'bench/medusa-results.json';
const SETTLE_MS = 1_000;
const logPath = 'bench/service.log';

const { values } = parseArgs({
  options: {
    'medusa-url': { type: 'string' },
    'publishable-key': { type: 'string' },
    'medusa-pid': { type: 'string' },
    /** Recorded in the results as given (Medusa's HTTP answers do not name it). */
    'medusa-version': { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
  },
});
const medusaUrl = values['medusa-url']?.replace(/\/$/, '');
const publishableKey = values['publishable-key'];
if (!medusaUrl || !publishableKey) throw new Error('--medusa-url and --publishable-key are required');
const medusaPid = values['medusa-pid'] ? Math.round(positiveNumber(values['medusa-pid'], 0, 'medusa-pid')) : undefined;
const rounds = Math.round(positiveNumber(values.rounds, 3, 'rounds'));
const settings = {
  connections: Math.round(positiveNumber(values.connections, 8, 'connections')),
  warmupSeconds: positiveNumber(values.warmup, 3, 'warmup'),
  durationSeconds: positiveNumber(values.duration, 10, 'duration'),
};

const MEDUSA_HEADERS = { 'x-publishable-api-key': publishableKey };
const MEDUSA_JSON_HEADERS = { ...MEDUSA_HEADERS, 'content-type': 'application/json' };

async function medusaJson(path: string, init: RequestInit, expected: number): Promise<Record<string, unknown>> {
  const response = await fetch(medusaUrl + path, init);
  const text = await response.text();
  if (response.status !== expected)
    throw new Error(`Medusa ${init.method ?? 'GET'} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

interface MedusaLoads {
  list: Load;
  cartCreation: Load;
  cartRead: Load;
}

/** Medusa's region, two variants of its first two products, and one cart to read, each request checked once. */
async function medusaLoads(): Promise<MedusaLoads> {
  const { regions } = (await medusaJson('/store/regions', { headers: MEDUSA_HEADERS }, 200)) as {
    regions: Array<{ id: string }>;
  };
  const region = regions[0]?.id;
  if (!region) throw new Error('Medusa has no region: seed it first');
  const list: Load = {
    method: 'GET',
    url: `/store/products?fields=*variants.calculated_price,+variants.inventory_quantity&region_id=${region}&limit=2`,
    headers: MEDUSA_HEADERS,
  };
  const listResponse = await fetch(medusaUrl + list.url, { headers: list.headers });
  if (listResponse.status !== 200) throw new Error(`Medusa's product list answered ${listResponse.status}`);
  const { products } = (await listResponse.json()) as { products: Array<{ variants: Array<{ id: string }> }> };
  const variants = products.map((product) => product.variants[0]?.id);
  if (variants.length < 2 || variants.some((id) => !id)) throw new Error('Medusa lists fewer than two products');
  const body = JSON.stringify({ region_id: region, items: variants.map((id) => ({ variant_id: id, quantity: 1 })) });
  const cartCreation: Load = { method: 'POST', url: '/store/carts', headers: MEDUSA_JSON_HEADERS, body };
  const { cart } = (await medusaJson('/store/carts', { method: 'POST', headers: MEDUSA_JSON_HEADERS, body }, 200)) as {
    cart: { id: string };
  };
  const cartRead: Load = { method: 'GET', url: `/store/carts/${cart.id}`, headers: MEDUSA_HEADERS };
  await medusaJson(cartRead.url, { headers: MEDUSA_HEADERS }, 200);
  return { list, cartCreation, cartRead };
}

/**
 * Waits until Medusa has answered what the load generator left in flight when its run ended (up to one request per
 * connection, each taking Medusa far longer than ours), so that this work does not run beside the next measurement.
 */
async function settle(): Promise<void> {
  await fetch(`${medusaUrl}/health`);
  await delay(SETTLE_MS);
}

interface Figures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failures: number;
  cpuMsPerRequest?: number;
}

function figures(measured: Measurement, cpuKnown: boolean): Figures {
  return {
    requestsPerSecond: measured.requestsPerSecond,
    p50Ms: measured.p50Ms,
    p99Ms: measured.p99Ms,
    failures: measured.non2xx + measured.errors,
    ...(cpuKnown ? { cpuMsPerRequest: measured.cpuMsPerRequest } : {}),
  };
}

interface Pair {
  title: string;
  ours: Load;
  medusa: Load;
  /** The pair whose Medusa figure this one reuses from the same round (the same Medusa request, not loaded twice). */
  medusaFrom?: string;
  /** The ratio issue #30 asks to keep. */
  floor: number;
}

interface PairRound {
  loadAverage: number;
  ours: Figures;
  medusa: Figures;
  ratio: number;
}

function median(numbers: number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<void> {
  const database = await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
  let service: ServerProcess | undefined;
  try {
    service = await startServiceProcess({ root, databaseEnv: database.env, logFile: `${root}/${logPath}` });
    const medusaServer: ServerProcess = {
      pid: medusaPid ?? process.pid, // without it the CPU figure is not reported
      url: medusaUrl!,
      stop: async () => {},
    };
    const creation = await sessionCreation(service.url);
    const medusa = await medusaLoads();
    const pairs: Pair[] = [
      {
        title: 'products list, cached / Medusa GET /store/products',
        ours: (await productList(service.url)).load,
        medusa: medusa.list,
        floor: 100,
      },
      {
        title: 'products list, each read new (cache misses) / Medusa GET /store/products',
        ours: (await missingReads(service.url)).load,
        medusa: medusa.list,
        medusaFrom: 'products list, cached / Medusa GET /store/products',
        floor: 20,
      },
      {
        title: 'POST /checkout_sessions / Medusa POST /store/carts',
        ours: creation.load,
        medusa: medusa.cartCreation,
        floor: 0,
      },
      {
        title: 'GET /checkout_sessions/{id} / Medusa GET /store/carts/{id}',
        ours: (await sessionRead(service.url, sessionId(creation.fixture))).load,
        medusa: medusa.cartRead,
        floor: 0,
      },
    ];
    const results = new Map<string, PairRound[]>(pairs.map((pair) => [pair.title, []]));
    for (let round = 1; round <= rounds; round++) {
      const medusaThisRound = new Map<string, Figures>();
      for (const pair of pairs) {
        const loadAverage = loadavg()[0]!;
        const ours = figures(await measure(service, pair.ours, settings), true);
        const reused = pair.medusaFrom ? medusaThisRound.get(pair.medusaFrom) : undefined;
        const theirs = reused ?? figures(await measure(medusaServer, pair.medusa, settings), medusaPid !== undefined);
        if (!reused) await settle();
        medusaThisRound.set(pair.title, theirs);
        if (theirs.requestsPerSecond === 0)
          throw new Error(
            `Medusa answered nothing in a ${settings.durationSeconds} s run of ${pair.title}: fewer --connections or a longer --duration`,
          );
        const ratio = ours.requestsPerSecond / theirs.requestsPerSecond;
        results.get(pair.title)!.push({ loadAverage, ours, medusa: theirs, ratio });
        process.stdout.write(
          `round ${round}  ${pair.title}: ours ${ours.requestsPerSecond.toFixed(0)} req/s, Medusa ` +
            `${theirs.requestsPerSecond.toFixed(1)} req/s, ${ratio.toFixed(0)}x, failures ${ours.failures}/` +
            `${theirs.failures}, load ${loadAverage.toFixed(2)}\n`,
        );
      }
    }
    const summary = pairs.map((pair) => {
      const measured = results.get(pair.title)!;
      const ratio = median(measured.map((round) => round.ratio));
      return {
        title: pair.title,
        ours: { method: pair.ours.method, url: pair.ours.url },
        medusa: { method: pair.medusa.method, url: pair.medusa.url },
        medianRatio: ratio,
        ...(pair.floor ? { floor: pair.floor, keeps: ratio >= pair.floor } : {}),
        rounds: measured,
      };
    });
    process.stdout.write('\nMedian ratio over the rounds (ours / Medusa req/s):\n');
    for (const row of summary) {
      const keeps = row.floor ? ` (floor ${row.floor}x: ${row.keeps ? 'kept' : 'NOT kept'})` : '';
      process.stdout.write(`  ${row.medianRatio.toFixed(0).padStart(6)}x  ${row.title}${keeps}\n`);
    }
    writeFileSync(
      `${root}/${resultsPath}`,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim(), node: process.version },
          medusa: { url: medusaUrl, version: values['medusa-version'] ?? 'not given' },
          settings: { ...settings, rounds },
          pairs: summary,
        },
        null,
        2,
      )}\n`,
    );
    process.stdout.write(`Results: ${resultsPath}\n`);
  } finally {
    await service?.stop();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench/medusa failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
