// Prometheus metrics (prom-client), kept only when METRICS_PORT is set (src/service.ts loads this module then): one
// registry per process state, never prom-client's global one, served on a listener of its own (serveMetrics) so that
// it is never public by accident. The layers that record are handed this object: the request pipeline (a recorder
// per compiled route, told by the door, src/http/server.ts), the database's store (statements, batches), the rate
// limiters (Redis fallbacks), the idempotency strategies, the webhook deliveries and the retention sweeps. Every label is bounded: a
// route template (never a path), a method, a status code, a surface, a statement's kind or name. What the database
// holds (orders and sessions by status, the outbox) and the pool are read when Prometheus scrapes, not per request.
// The names follow OpenTelemetry's semantic conventions where one exists (`http.server.request.duration` ->
// `http_server_request_duration_seconds`); the service's own are prefixed `storefront_`. docs/operations.md lists them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** OpenTelemetry's `http.server.request.duration` buckets (seconds). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
/** Statements run faster than requests: finer at the low end. */
const STATEMENT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const BATCH_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256];

/** The methods named as themselves; any other is `_OTHER` (OpenTelemetry's rule, which keeps the label bounded). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** What the scrape reads from the database, each row a bounded label value and its count. */
export interface StatusCounts {
  orders: Array<{ status: string; count: number }>;
  sessions: Array<{ status: string; count: number }>;
  refusedPayments: Array<{ status: string; count: number }>;
  /** Webhook deliveries neither delivered nor given up. */
  outbox: number;
}

/** The connection pool as it stands (tarn's counts); undefined where the database has none. */
export interface PoolCounts {
  used: number;
  idle: number;
  waiting: number;
  max: number;
}

/** What the scrape reads: supplied by src/service.ts once the database is open. */
export interface ScrapeSources {
  pool(): PoolCounts | undefined;
  /** Rejects (or times out) when the database cannot answer: the gauges then keep their last values. */
  counts(): Promise<StatusCounts>;
}

type Observe = (value: number) => void;

/** One label set of a bound histogram: its counts per bucket (not cumulative), sum and count. */
interface Series {
  labels: Readonly<Record<string, string>>;
  counts: Float64Array;
  sum: number;
  count: number;
}

/** A sample as prom-client's registry reads it: `labels` first, then the series' own (`sharedLabels`). */
interface Sample {
  labels: Record<string, string | number>;
  sharedLabels: Series['labels'];
  value: number;
  metricName: string;
  /** None: no exemplars are kept (null on the buckets, as prom-client writes it). */
  exemplar?: null;
}

/**
 * A histogram whose label sets are bound once, a metric of the registry as prom-client's own Histogram is (`get`,
 * `reset`): the request durations (a route's labels are fixed when it is compiled, its method and status once known),
 * the statement durations and the batch sizes (fixed per statement). Each label set is resolved once to its series, so
 * an observation is a bucket search and three additions; prom-client's `labels(...).observe` checks every label name,
 * hashes the label set and allocates on every call (about 0.9 µs on Node 20, against a statement's few µs of CPU).
 * What is scraped is what prom-client writes for a histogram (cumulative `_bucket` with `le`, `+Inf`, `_sum`,
 * `_count`, per label set).
 */
class BoundHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: number[];
  readonly #series: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    buckets: number[],
  ) {
    this.#bounds = [...buckets].sort((a, b) => a - b);
  }

  /** The observe of one label set. */
  series(labels: Series['labels']): Observe {
    const series: Series = { labels, counts: new Float64Array(this.#bounds.length), sum: 0, count: 0 };
    this.#series.push(series);
    const bounds = this.#bounds;
    return (seconds) => {
      series.sum += seconds;
      series.count += 1;
      for (let i = 0; i < bounds.length; i++) {
        if (seconds <= bounds[i]!) {
          series.counts[i]! += 1;
          return;
        }
      }
    };
  }

  /** What the registry writes in the text format (as prom-client's Histogram gives it). */
  getForPromString() {
    const values: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const { labels, counts, sum, count } of this.#series) {
      if (count === 0) continue;
      let cumulative = 0;
      this.#bounds.forEach((le, i) => {
        cumulative += counts[i]!;
        values.push({ labels: { le }, sharedLabels: labels, value: cumulative, metricName: bucket, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: labels, value: count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: labels, value: sum, metricName: `${this.name}_sum` },
        { labels: {}, sharedLabels: labels, value: count, metricName: `${this.name}_count` },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The same with each sample's labels in one object (the registry's JSON). */
  get() {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, ...sample }) => ({
        ...sample,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset(): void {
    for (const series of this.#series) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }
}

/**
 * One route's recorder, built when its pipeline is compiled: its label values are fixed, so a request costs two map
 * lookups (its method, its status) and the observe of its series (BoundHistogram).
 */
export class RouteRecorder {
  readonly #byMethod = new Map<string, Map<number, Observe>>();
  readonly #metrics: Metrics;
  readonly #route: string;
  readonly #operationId: string | undefined;
  readonly #refused: () => void;

  constructor(metrics: Metrics, surface: string, route: string, operationId: string | undefined) {
    this.#metrics = metrics;
    this.#route = route;
    this.#operationId = operationId;
    const refusals = metrics.rateLimitRefusals.labels(surface);
    this.#refused = () => refusals.inc();
  }

  /** A request of this route, started at `started` (performance.now()), ended with `status`. */
  end(method: string, status: number, started: number): void {
    let byStatus = this.#byMethod.get(method);
    if (byStatus === undefined) this.#byMethod.set(method, (byStatus = new Map()));
    let observe = byStatus.get(status);
    if (observe === undefined) byStatus.set(status, (observe = this.#child(method, status)));
    observe((performance.now() - started) / 1000);
    if (status === 429) this.#refused();
  }

  #child(method: string, status: number): Observe {
    const labels: Record<string, string> = {
      http_request_method: KNOWN_METHODS.has(method) ? method : '_OTHER',
      http_route: this.#route,
      http_response_status_code: String(status),
    };
    if (this.#operationId) labels.operation_id = this.#operationId;
    return this.#metrics.requestDuration.series(labels);
  }
}

export class Metrics {
  readonly registry = new Registry();

  /** Requests in flight: counted by the one door (src/http/server.ts), read when Prometheus scrapes. */
  inFlight = 0;

  readonly requestDuration = new BoundHistogram(
    'http_server_request_duration_seconds',
    'Duration of HTTP server requests, by route template (or unmatched), method, status code and operation.',
    REQUEST_BUCKETS,
  );

  readonly activeRequests = ((inFlight: () => number) =>
    new Gauge({
      name: 'http_server_active_requests',
      help: 'HTTP server requests in flight.',
      registers: [this.registry],
      collect() {
        this.set(inFlight());
      },
    }))(() => this.inFlight);

  readonly rateLimitRefusals = new Counter({
    name: 'storefront_rate_limit_refusals_total',
    help: 'Requests refused with 429 by a rate limit, by surface.',
    labelNames: ['surface'] as const,
    registers: [this.registry],
  });

  readonly idempotency = new Counter({
    name: 'storefront_idempotency_outcomes_total',
    help: 'Requests under an Idempotency-Key answered from the key record: replayed, conflict or in_flight.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly statementDuration = new BoundHistogram(
    'db_client_operation_duration_seconds',
    'Duration of database statements, by operation (SELECT, INSERT, ...) and prepared statement name.',
    STATEMENT_BUCKETS,
  );

  readonly batchRows = new BoundHistogram(
    'storefront_db_batch_rows',
    'Items carried by one batched statement (group commit or batched read), by statement.',
    BATCH_BUCKETS,
  );

  readonly redisFallbacks = new Counter({
    name: 'storefront_redis_fallbacks_total',
    help: 'Rate-limit counts taken in memory because Redis failed or was not ready, by limiter.',
    labelNames: ['limiter'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'storefront_webhook_deliveries_total',
    help: 'Order-webhook delivery attempts, by outcome: delivered, retried (failed, retried later), gave_up, error.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly retentionPurged = new Counter({
    name: 'storefront_retention_rows_purged_total',
    help: 'Rows deleted by the retention sweeps, by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly scrapeFailures = new Counter({
    name: 'storefront_metrics_query_failures_total',
    help: 'Scrapes whose database counts could not be read in time (the gauges kept their last values).',
    registers: [this.registry],
  });

  readonly #statements = new Map<string, Observe>();
  readonly #batches = new Map<string, Observe>();
  readonly #system: string;

  /** `dbSystem`: `postgresql`, or `pglite` for the embedded database. */
  constructor({ dbSystem }: { dbSystem: string }) {
    this.#system = dbSystem;
    for (const histogram of [this.requestDuration, this.statementDuration, this.batchRows])
      this.registry.registerMetric(histogram as unknown as Histogram);
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` refuses; their per-type gauges without the suffix
    // (nodejs_active_handles{type}, …) say the same, summed.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
      this.registry.removeSingleMetric(name);
  }

  /** The recorder of one compiled route; `route` is its template, or `unmatched`. */
  route(surface: string, route: string, operationId: string | undefined): RouteRecorder {
    return new RouteRecorder(this, surface, route, operationId);
  }

  /** A statement ran for `seconds`: `name` is its prepared statement's name, if any. */
  statement(sql: string, name: string | undefined, seconds: number): void {
    const key = name ?? operationOf(sql);
    let observe = this.#statements.get(key);
    if (observe === undefined) {
      observe = this.statementDuration.series({
        db_system_name: this.#system,
        db_operation_name: operationOf(sql),
        db_query_name: name ?? '',
      });
      this.#statements.set(key, observe);
    }
    observe(seconds);
  }

  /** The batched statement `statement` carried `items` items. */
  batch(statement: string): Observe {
    let observe = this.#batches.get(statement);
    if (observe === undefined) this.#batches.set(statement, (observe = this.batchRows.series({ statement })));
    return observe;
  }

  /** Reads the pool and the database's counts at every scrape. */
  collectFrom(sources: ScrapeSources, timeoutMs: number): void {
    const registers = [this.registry];
    const poolGauge = (name: string, help: string, pick: (pool: PoolCounts) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          const pool = sources.pool();
          if (pool) this.set(pick(pool));
        },
      });
    // OpenTelemetry's db.client.connection.count, whose `_count` suffix promtool reserves for histograms.
    new Gauge({
      name: 'db_client_connections',
      help: 'Database connections of the pool, by state (used, idle).',
      labelNames: ['db_client_connection_state'] as const,
      registers,
      collect() {
        const pool = sources.pool();
        if (!pool) return;
        this.set({ db_client_connection_state: 'used' }, pool.used);
        this.set({ db_client_connection_state: 'idle' }, pool.idle);
      },
    });
    poolGauge('db_client_connection_pending_requests', 'Queries waiting for a pooled connection.', (p) => p.waiting);
    poolGauge('db_client_connection_max', 'The most connections the pool opens.', (p) => p.max);

    // One read of the database per scrape, shared by the gauges below (each collect() awaits the same promise).
    let reading: Promise<StatusCounts | undefined> | undefined;
    const read = () =>
      (reading ??= withTimeout(sources.counts(), timeoutMs)
        .catch(() => {
          this.scrapeFailures.inc();
          return undefined;
        })
        .finally(() => setImmediate(() => (reading = undefined))));
    const statusGauge = (name: string, help: string, label: string, pick: (counts: StatusCounts) => StatusRow[]) =>
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers,
        async collect() {
          const counts = await read();
          if (!counts) return;
          this.reset();
          for (const row of pick(counts)) this.set({ [label]: row.status }, row.count);
        },
      });
    statusGauge('storefront_orders', 'Orders stored, by status.', 'status', (counts) => counts.orders);
    statusGauge(
      'storefront_checkout_sessions',
      'Checkout sessions stored, by status (completed: paid, an order made).',
      'status',
      (counts) => counts.sessions,
    );
    statusGauge(
      'storefront_refused_payments',
      'Payments taken but refused (the session changed meanwhile), by refund state.',
      'refund_state',
      (counts) => counts.refusedPayments,
    );
    new Gauge({
      name: 'storefront_webhook_outbox_depth',
      help: 'Order-webhook deliveries waiting: neither delivered nor given up.',
      registers,
      async collect() {
        const counts = await read();
        if (counts) this.set(counts.outbox);
      },
    });
  }
}

type StatusRow = { status: string; count: number };

/** `SELECT`, `INSERT`, … : a statement's first keyword, or OTHER (bounded). */
const OPERATIONS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'WITH', 'BEGIN', 'COMMIT', 'ROLLBACK', 'SET']);
function operationOf(sql: string): string {
  const word = /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase();
  return word !== undefined && OPERATIONS.has(word) ? word : 'OTHER';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`No answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The metrics listener: a plain node:http server answering `GET /metrics` (and HEAD) in Prometheus' text format, 404
 * for anything else. Nothing of the public service is reachable through it.
 */
export async function serveMetrics(
  metrics: Metrics,
  { port, host }: { port: number; host: string },
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: try GET /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (error: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${String(error)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return { server, url: `http://${shown}:${address.port}/metrics` };
}
