// The webhook-to-order path: orders per second when Stripe delivers signed `checkout.session.completed` events for
// distinct paid sessions, 32 at a time, to the built service on PostgreSQL (a fresh database, dropped at the end, or
// DATABASE_URL). Stripe is the local fake the tests use: nothing leaves the machine. A benchmark, not a test: it
// reports and exits 0 unless the harness itself fails.
//   npm run bench:orders -- [--orders 640] [--connections 32]
import { writeFileSync } from 'node:fs';
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
} from '../test/support/stripe.js';
import { openDatabase } from './database.js';
import { cpuMs, startServiceProcess } from './processes.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: { orders: { type: 'string', default: '640' }, connections: { type: 'string', default: '32' } },
});
const ORDERS = Number(values.orders);
const CONNECTIONS = Number(values.connections);
const SESSION_BODY = JSON.stringify({
  items: [
    { id: 'variant_01tongue2pack', quantity: 1 },
    { id: 'variant_01tonguetravel', quantity: 1 },
  ],
  promo_codes: ['10OFF'],
});

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

async function main(): Promise<void> {
  const database = await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
  const stripe = await startFakeStripe();
  const service = await startServiceProcess({
    root,
    databaseEnv: database.env,
    logFile: `${root}/bench/orders.log`,
    env: { ...stripe.env, PAYMENTS_MODE: 'stripe' },
  });
  try {
    // Sessions and their Stripe checkouts, as buyers opening the pay page would make them (not measured).
    const checkouts = await pool(
      Array.from({ length: ORDERS }, (_, index) => index),
      8,
      async (): Promise<CreatedCheckout> => {
        const created = (await (
          await fetch(`${service.url}/checkout_sessions`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: SESSION_BODY,
          })
        ).json()) as { id: string };
        const page = await fetch(`${service.url}/pay/${created.id}`, { redirect: 'manual' });
        const location = page.headers.get('location') ?? '';
        return stripe.created.find((entry) => location.endsWith(entry.id))!;
      },
    );
    const deliveries = checkouts.map((checkout) =>
      signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))),
    );

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
    const cpuPerOrder = (cpuMs(service.pid) - cpuBefore) / ORDERS;

    const sql = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await sql.connect();
    const stored = Number((await sql.query('select count(*) as n from orders')).rows[0].n);
    await sql.end();

    latencies.sort((a, b) => a - b);
    const report = {
      date: new Date().toISOString(),
      loadAverageAtStart: loadavg()[0],
      orders: ORDERS,
      connections: CONNECTIONS,
      ordersPerSecond: Math.round((ORDERS / seconds) * 10) / 10,
      p50Ms: Math.round(percentile(latencies, 50)),
      p99Ms: Math.round(percentile(latencies, 99)),
      cpuMsPerOrder: Math.round(cpuPerOrder * 100) / 100,
      failures,
      ordersStored: stored,
      database: database.kind,
    };
    writeFileSync(`${root}/bench/orders-results.json`, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(
      `Webhook → order, ${CONNECTIONS} concurrent signed deliveries, ${ORDERS} orders on PostgreSQL: ${report.ordersPerSecond} orders/s, ` +
        `p50 ${report.p50Ms} ms, p99 ${report.p99Ms} ms, ${report.cpuMsPerOrder} CPU ms per order, ${failures} failures, ${stored} orders stored\n`,
    );
  } finally {
    await service.stop();
    await stripe.close();
    await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
