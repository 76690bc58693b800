// The bound histograms (src/metrics.ts): request durations, statement durations and batch sizes. Their series are
// resolved once per label set and observed without prom-client's per-call work, so each scrape is checked against
// prom-client's own Histogram fed the same observations: the same lines, in the text format and in the registry's
// JSON; and the requests in flight read when scraped.
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics.js';

const NAME = 'http_server_request_duration_seconds';
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** The requests, as [method, status, seconds]: every bucket, a bound exactly, and beyond the last. */
const REQUESTS: Array<[string, number, number]> = [
  ['GET', 200, 0.001],
  ['GET', 200, 0.005],
  ['GET', 200, 0.3],
  ['GET', 404, 0.02],
  ['POST', 201, 12],
  ['BREW', 200, 0.07],
  ...BUCKETS.map((bound): [string, number, number] => ['GET', 200, bound + 0.0001]),
];

function recorded(): Metrics {
  const metrics = new Metrics({ dbSystem: 'postgresql' });
  const recorder = metrics.route('reads', '/api/store/products/{id}', 'getProduct');
  const now = performance.now;
  try {
    for (const [method, status, seconds] of REQUESTS) {
      performance.now = () => seconds * 1000;
      recorder.end(method, status, 0);
    }
  } finally {
    performance.now = now;
  }
  return metrics;
}

function byProm(): Registry {
  const registry = new Registry();
  const histogram = new Histogram({
    name: NAME,
    help: 'Duration of HTTP server requests, by route template (or unmatched), method, status code and operation.',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code', 'operation_id'],
    buckets: BUCKETS,
    registers: [registry],
  });
  for (const [method, status, seconds] of REQUESTS) {
    histogram.observe(
      {
        http_request_method: method === 'BREW' ? '_OTHER' : method,
        http_route: '/api/store/products/{id}',
        http_response_status_code: String(status),
        operation_id: 'getProduct',
      },
      seconds,
    );
  }
  return registry;
}

describe('the request duration histogram', () => {
  it("is scraped as prom-client's Histogram writes the same requests", async () => {
    const metrics = recorded();
    const expected = await byProm().getSingleMetricAsString(NAME);
    expect(await metrics.registry.getSingleMetricAsString(NAME)).toBe(expected);
    expect(await metrics.registry.metrics()).toContain(expected);
  });

  it("is the same in the registry's JSON", async () => {
    const json = (await recorded().registry.getMetricsAsJSON()).find((metric) => metric.name === NAME);
    const expected = (await byProm().getMetricsAsJSON()).find((metric) => metric.name === NAME);
    expect(json).toEqual(expected);
  });

  it('counts the requests in flight when scraped', async () => {
    const metrics = new Metrics({ dbSystem: 'postgresql' });
    const inFlight = async () =>
      (await metrics.registry.getSingleMetric('http_server_active_requests')!.get()).values[0]?.value;
    metrics.inFlight += 2; // as the door counts two requests it has not answered yet
    expect(await inFlight()).toBe(2);
    metrics.inFlight--;
    expect(await inFlight()).toBe(1);
  });
});

/** Statements as [sql, prepared statement name, seconds]: bounds exactly, beyond the last, and an unnamed one. */
const STATEMENTS: Array<[string, string | undefined, number]> = [
  ['select * from checkout_sessions where id = $1', 'session_read', 0.0004],
  ['select * from checkout_sessions where id = $1', 'session_read', 0.001],
  ['select * from checkout_sessions where id = $1', 'session_read', 7],
  ['  insert into carts values ($1)', undefined, 0.003],
  ['vacuum', undefined, 0.2],
];
const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Batches as [statement, items]: one on a bound, one between, one beyond the last. */
const BATCHES: Array<[string, number]> = [
  ['cart_store', 1],
  ['cart_store', 3],
  ['cart_store', 300],
  ['session_read', 2],
];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

describe('the statement duration and batch size histograms', () => {
  function observed(): Metrics {
    const metrics = new Metrics({ dbSystem: 'pglite' });
    for (const [sql, name, seconds] of STATEMENTS) metrics.statement(sql, name, seconds);
    for (const [statement, items] of BATCHES) metrics.batch(statement)(items);
    return metrics;
  }

  function byProm(): Registry {
    const registry = new Registry();
    const statements = new Histogram({
      name: 'db_client_operation_duration_seconds',
      help: 'Duration of database statements, by operation (SELECT, INSERT, ...) and prepared statement name.',
      labelNames: ['db_system_name', 'db_operation_name', 'db_query_name'],
      buckets: STATEMENT_BUCKETS,
      registers: [registry],
    });
    for (const [sql, name, seconds] of STATEMENTS) {
      const word = sql.trim().split(' ')[0]!.toUpperCase();
      statements.observe(
        {
          db_system_name: 'pglite',
          db_operation_name: ['SELECT', 'INSERT'].includes(word) ? word : 'OTHER',
          db_query_name: name ?? '',
        },
        seconds,
      );
    }
    const batches = new Histogram({
      name: 'storefront_db_batch_rows',
      help: 'Items carried by one batched statement (group commit or batched read), by statement.',
      labelNames: ['statement'],
      buckets: BATCH_BUCKETS,
      registers: [registry],
    });
    for (const [statement, items] of BATCHES) batches.observe({ statement }, items);
    return registry;
  }

  for (const name of ['db_client_operation_duration_seconds', 'storefront_db_batch_rows']) {
    it(`writes ${name} as prom-client's Histogram writes the same observations`, async () => {
      const metrics = observed();
      const expected = byProm();
      expect(await metrics.registry.getSingleMetricAsString(name)).toBe(await expected.getSingleMetricAsString(name));
      const json = (await metrics.registry.getMetricsAsJSON()).find((metric) => metric.name === name);
      expect(json).toEqual((await expected.getMetricsAsJSON()).find((metric) => metric.name === name));
    });
  }
});
