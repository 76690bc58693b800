// The webhook-to-order path: orders per second when Stripe delivers signed `checkout.session.completed` events for
// distinct paid sessions, 32 at a time, to the built service on PostgreSQL (a fresh database, dropped at the end, or
// DATABASE_URL), against its ceiling in the same round: pgbench replaying the statements the service sends for one
// order (captured from the service, bench/order-transaction.ts) with as many clients. Stripe is the local fake the tests
// use: nothing leaves the machine. The sessions and their Stripe checkouts are made through a second instance on the
// same database, so that the measured one takes deliveries only: its CPU figures and its profile are the webhook's
// alone, with nothing of making the sessions left over (their garbage, their pay pages) to be collected in a round.
// A benchmark, not a test: it reports and exits 0 unless the harness itself fails.
//   npm run bench:orders -- [--orders 640] [--connections 32] [--rounds 3] [--cpu-prof (a V8 profile of the service in
//   bench/profiles/)]
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import {
  paidCheckout,
  signedDelivery,
  startFakeStripe,
  stripeEvent,
  type CreatedCheckout,
  type FakeStripe,
} from '../test/support/stripe.js';
import { positiveNumber } from './arguments.js';
import { databaseCpuProbe, openDatabase } from './database.js';
import type { Measurement } from './load.js';
import {
  captureOrderTransaction,
  removeReplayedOrders,
  replayOrders,
  type OrderTransaction,
} from './order-transaction.js';
import { pgbenchUnavailable } from './pgbench.js';
import { cpuMs, peakRss, resetPeakRss, startServiceProcess, type ServerProcess } from './processes.js';
import { formatRows, judgeRow, type CeilingFigures, type Round } from './report.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    orders: { type: 'string', default: '640' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    'cpu-prof': { type: 'boolean', default: false },
  },
});
const ORDERS = Math.round(positiveNumber(values.orders, 640, 'orders'));
const CONNECTIONS = Math.round(positiveNumber(values.connections, 32, 'connections'));
const ROUNDS = Math.round(positiveNumber(values.rounds, 3, 'rounds'));
/** pgbench replays this many times as many orders as the service takes in a round: the same count lasts too little. */
const CEILING_ORDERS_FACTOR = 2;
/** Orders taken before the first round and not measured (JIT, pools, plans). */
const WARMUP_ORDERS = Math.min(ORDERS, 128);
const VARIANTS = ['variant_01tongue2pack', 'variant_01tonguetravel'];
const SESSION_BODY = JSON.stringify({
  items: VARIANTS.map((id) => ({ id, quantity: 1 })),
  promo_codes: ['10OFF'],
});
/** Enough stock that no order of the run runs short: each is the common order, not one held for review. */
const STOCK = 1_000_000;

async function withClient<T>(databaseUrl: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** Gives the run's variants STOCK; the function it returns puts their own stock back. */
async function stockUp(databaseUrl: string): Promise<() => Promise<void>> {
  const { rows } = await withClient(databaseUrl, (client) =>
    client.query<{ id: string; inventory_quantity: number }>(
      'update variants v set inventory_quantity = $2 from variants old where v.id = old.id and v.id = any($1) returning v.id, old.inventory_quantity',
      [VARIANTS, STOCK],
    ),
  );
  return () =>
    withClient(databaseUrl, async (client) => {
      for (const { id, inventory_quantity: quantity } of rows)
        await client.query('update variants set inventory_quantity = $2 where id = $1', [id, quantity]);
    });
}

/** Runs `work` over `items`, `concurrency` at a time, in order of start. */
async function pool<T, R>(items: T[], concurrency: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Paid-for sessions as buyers opening the pay page would make them (not measured), one signed delivery each. */
async function paidDeliveries(baseUrl: string, stripe: FakeStripe, count: number) {
  const checkouts = await pool(
    Array.from({ length: count }, (_, index) => index),
    8,
    async (): Promise<CreatedCheckout> => {
      const created = (await (
        await fetch(`${baseUrl}/checkout_sessions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: SESSION_BODY,
        })
      ).json()) as { id: string };
      const page = await fetch(`${baseUrl}/pay/${created.id}`, { redirect: 'manual' });
      const location = page.headers.get('location') ?? '';
      return stripe.created.find((entry) => location.endsWith(entry.id))!;
    },
  );
  return checkouts.map((checkout) => {
    const event = stripeEvent('checkout.session.completed', paidCheckout(checkout));
    return {
      sessionId: checkout.params.get('client_reference_id')!,
      eventId: String(event.id),
      checkoutReference: checkout.id,
      delivery: signedDelivery(event),
    };
  });
}

/** Delivers every event, CONNECTIONS at a time; an answer other than 200 `order_created` counts as a failure. */
async function deliver(service: ServerProcess, deliveries: RequestInit[], databaseUrl: string): Promise<Measurement> {
  const databaseCpuSince = await databaseCpuProbe(databaseUrl)();
  const cpuBefore = cpuMs(service.pid);
  const started = performance.now();
  const latencies: number[] = [];
  let failures = 0;
  await pool(deliveries, CONNECTIONS, async (delivery) => {
    const sent = performance.now();
    const response = await fetch(`${service.url}/webhooks/stripe`, delivery);
    const body = (await response.json()) as { result?: string };
    latencies.push(performance.now() - sent);
    if (response.status !== 200 || body.result !== 'order_created') failures += 1;
  });
  const seconds = (performance.now() - started) / 1000;
  const cpuMsPerRequest = (cpuMs(service.pid) - cpuBefore) / deliveries.length;
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: deliveries.length / seconds,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    requests: deliveries.length,
    non2xx: failures,
    errors: 0,
    cpuMsPerRequest,
    databaseCpuMsPerRequest: (await databaseCpuSince()) / deliveries.length,
  };
}

async function ceiling(
  databaseUrl: string,
  transaction: OrderTransaction,
  round: number,
): Promise<CeilingFigures | undefined> {
  if (pgbenchUnavailable(databaseUrl)) return undefined;
  const figures = await replayOrders(databaseUrl, transaction, {
    clients: CONNECTIONS,
    transactionsPerClient: Math.ceil((ORDERS * CEILING_ORDERS_FACTOR) / CONNECTIONS),
    round,
  });
  return { requestsPerSecond: figures.transactionsPerSecond, errors: figures.failed };
}

async function main(): Promise<void> {
  const loadAverageAtStart = loadavg()[0]!;
  const database = await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
  const databaseUrl = database.env.DATABASE_URL!;
  const stripe = await startFakeStripe();
  const paymentsEnv = { ...stripe.env, PAYMENTS_MODE: 'stripe' };
  let transaction: OrderTransaction | undefined;
  let service: ServerProcess | undefined;
  let preparer: ServerProcess | undefined;
  let restoreStock: (() => Promise<void>) | undefined;
  if (values['cpu-prof']) mkdirSync(`${root}/bench/profiles`, { recursive: true });
  try {
    transaction = await captureOrderTransaction({ ...database.env, ...paymentsEnv }, async (baseUrl) => {
      // The schema exists once the instance has started; the replays then set the stock this order left.
      restoreStock = await stockUp(databaseUrl);
      const [paid] = await paidDeliveries(baseUrl, stripe, 1);
      return {
        ...paid!,
        deliver: async () => {
          const response = await fetch(`${baseUrl}/webhooks/stripe`, paid!.delivery);
          if (response.status !== 200) throw new Error(`the captured delivery answered ${response.status}`);
        },
      };
    });
    service = await startServiceProcess({
      root,
      databaseEnv: database.env,
      logFile: `${root}/bench/orders.log`,
      cpuProfileDir: values['cpu-prof'] ? `${root}/bench/profiles` : undefined,
      env: paymentsEnv,
    });
    preparer = await startServiceProcess({
      root,
      databaseEnv: database.env,
      logFile: `${root}/bench/orders-preparer.log`,
      env: paymentsEnv,
    });
    const deliveries = async (count: number) =>
      (await paidDeliveries(preparer!.url, stripe, count)).map((paid) => paid.delivery);
    await deliver(service, await deliveries(WARMUP_ORDERS), databaseUrl);

    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const prepared = await deliveries(ORDERS);
      const loadAverage = loadavg()[0]!;
      resetPeakRss(service.pid);
      const measured = await deliver(service, prepared, databaseUrl);
      const servicePeakRssBytes = peakRss(service.pid);
      const replayed = await ceiling(databaseUrl, transaction, round);
      rounds.push({
        service: measured,
        ...(replayed ? { ceiling: replayed, ratio: measured.requestsPerSecond / replayed.requestsPerSecond } : {}),
        servicePeakRssBytes,
        loadAverage,
      });
    }
    const row = judgeRow(
      {
        title: 'POST /webhooks/stripe (checkout.session.completed → order)',
        kind: 'creation',
        request: { method: 'POST', url: '/webhooks/stripe' },
        ceilingName: `pgbench: the order's statements replayed, -M prepared${pgbenchUnavailable(databaseUrl) ? ` (unavailable: ${pgbenchUnavailable(databaseUrl)})` : ''}`,
      },
      rounds,
    );

    // The replays' orders have the captured order's id followed by `_`.
    const replayed = `${transaction.fresh[2]!.replaceAll('_', '\\_')}\\_%`;
    const { rows } = await withClient(databaseUrl, (client) =>
      client.query<{ n: number }>('select count(*) as n from orders where id not like $1', [replayed]),
    );
    const stored = Number(rows[0]!.n);

    const report = {
      date: new Date().toISOString(),
      loadAverageAtStart,
      orders: ORDERS,
      connections: CONNECTIONS,
      warmupOrders: WARMUP_ORDERS,
      database: database.kind,
      row,
      ordersStored: stored,
    };
    writeFileSync(`${root}/bench/orders-results.json`, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(
      `${formatRows([row])}\n\n${ROUNDS} interleaved round(s) of ${ORDERS} orders after ${WARMUP_ORDERS} warm-up orders, ` +
        `${CONNECTIONS} concurrent signed deliveries and pgbench clients, ${database.kind} PostgreSQL; ` +
        `${stored} orders stored by the service; load average ${loadAverageAtStart.toFixed(1)} at start. Results: bench/orders-results.json\n`,
    );
  } finally {
    await service?.stop();
    await preparer?.stop();
    await stripe.close();
    if (transaction && database.kind === 'given') await removeReplayedOrders(databaseUrl, transaction);
    await restoreStock?.();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
