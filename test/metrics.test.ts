// Prometheus metrics (METRICS_PORT): a listener of its own, request durations per route template (never per path),
// the database and process metrics, text `promtool check metrics` accepts, and a real Prometheus scraping the instance
// and answering a PromQL query with the requests this test sent. The Grafana dashboard's queries parse in that
// Prometheus too.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { enqueueOrderEvent } from '../src/services/order-webhooks.js';
import { registerClient } from './support/agent.js';
import { createdSession, createSession } from './support/checkout.js';
import { recordLogLines } from './support/answers.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';
const haveProm = existsSync(PROMETHEUS) && existsSync(PROMTOOL);
// As with Redis (test/support/global-setup.ts): in CI a missing Prometheus fails the run, never skips it.
if (!haveProm && process.env.CI === 'true')
  throw new Error(`CI=true but ${PROMETHEUS} or ${PROMTOOL} is missing: install Debian's prometheus package`);

const ITEMS = { items: [{ id: 'variant_01tongue2pack' }] };

async function scrape(api: TestService): Promise<string> {
  const response = await fetch(api.service.metricsUrl!);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

/** The samples of `name` (exact metric name), each its labels and value. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const found = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[pair[1]!] = pair[2]!;
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

/** The request count of a route and method (all statuses) in the duration histogram. */
function requestCount(text: string, route: string, method: string, status?: string): number {
  return samples(text, 'http_server_request_duration_seconds_count')
    .filter(({ labels }) => labels.http_route === route && labels.http_request_method === method)
    .filter(({ labels }) => status === undefined || labels.http_response_status_code === status)
    .reduce((sum, { value }) => sum + value, 0);
}

/**
 * How many series the text holds (sample lines), but the runtime's own (GC kinds and handle types appear as the process
 * meets them, whatever the requests were).
 */
const seriesCount = (text: string) =>
  text.split('\n').filter((line) => line !== '' && !line.startsWith('#') && !/^(nodejs|process)_/.test(line)).length;

describe('metrics on a listener of their own', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ env: { METRICS_PORT: '0' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('listens on loopback, apart from the public listener, and serves only /metrics', async () => {
    const metricsUrl = new URL(api.service.metricsUrl!);
    expect(metricsUrl.hostname).toBe('127.0.0.1');
    expect(metricsUrl.port).not.toBe(new URL(api.url).port);
    expect((await fetch(new URL('/', metricsUrl))).status).toBe(404);
    expect((await fetch(new URL('/metrics', metricsUrl), { method: 'POST' })).status).toBe(404);
    // The public listener has no /metrics: it is an unknown path there.
    expect((await fetch(new URL('/metrics', api.url))).status).toBe(404);
  });

  it('counts requests per route template, method, status and operation', async () => {
    const before = await scrape(api);
    const created = await createdSession(api, ITEMS);
    for (let i = 0; i < 3; i++) expect((await api.http(`/checkout_sessions/${created.id}`)).status).toBe(200);
    expect((await api.http('/checkout_sessions/cs_does_not_exist')).status).toBe(404);
    expect((await api.http('/api/store/regions')).status).toBe(200);
    const after = await scrape(api);
    const grew = (route: string, method: string, status?: string) =>
      requestCount(after, route, method, status) - requestCount(before, route, method, status);
    expect(grew('/checkout_sessions', 'POST', '201')).toBe(1);
    expect(grew('/checkout_sessions/{id}', 'GET', '200')).toBe(3);
    expect(grew('/checkout_sessions/{id}', 'GET', '404')).toBe(1);
    expect(grew('/api/store/regions', 'GET')).toBe(1);
    const read = samples(after, 'http_server_request_duration_seconds_count').find(
      ({ labels }) => labels.http_route === '/checkout_sessions/{id}' && labels.http_response_status_code === '200',
    );
    expect(read?.labels.operation_id).toBe('getCheckoutSession');
    // No series names a session id or a raw path.
    expect(after).not.toContain(created.id);
    expect(after).not.toContain('cs_does_not_exist');
    expect(samples(after, 'http_server_active_requests')[0]?.value).toBe(0);
  });

  it('counts a request in flight from the door until it is answered', async () => {
    const active = async () => samples(await scrape(api), 'http_server_active_requests')[0]?.value;
    expect(await active()).toBe(0);
    // A create whose body is still arriving: the door has taken it, its pipeline waits for the rest of the body.
    let finish!: () => void;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        const text = JSON.stringify(ITEMS);
        controller.enqueue(new TextEncoder().encode(text.slice(0, 5)));
        await new Promise<void>((resolve) => (finish = resolve));
        controller.enqueue(new TextEncoder().encode(text.slice(5)));
        controller.close();
      },
    });
    const created = api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const deadline = Date.now() + 10_000;
    while ((await active()) !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await active()).toBe(1);
    finish();
    expect((await created).status).toBe(201);
    expect(await active()).toBe(0);
  });

  it('keeps the series flat under 1,000 distinct unknown paths and ids', async () => {
    const flood = async (from: number, to: number) => {
      for (let i = from; i < to; i += 50) {
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => {
            const n = i + j;
            const target = n % 3 === 0 ? `/nowhere/${n}/x${n}` : n % 3 === 1 ? `/checkout_sessions/cs_${n}` : `/p${n}`;
            return fetch(new URL(target, api.url), { method: n % 2 ? 'GET' : 'DELETE' }).then((r) => r.body?.cancel());
          }),
        );
      }
    };
    // Every label value these requests can produce (and every statement they run), so that only a path- or id-shaped
    // label could add series from here on.
    await flood(0, 100);
    const before = seriesCount(await scrape(api));
    await flood(100, 1100);
    const after = await scrape(api);
    expect(seriesCount(after)).toBe(before);
    expect(requestCount(after, 'unmatched', 'GET')).toBeGreaterThanOrEqual(333);
  });

  it('reports the pool, statements, group commits, stored statuses, the outbox and the process', async () => {
    await createdSession(api, ITEMS);
    const text = await scrape(api);
    const used = samples(text, 'db_client_connections');
    expect(used.map(({ labels }) => labels.db_client_connection_state).sort()).toEqual(['idle', 'used']);
    expect(samples(text, 'db_client_connection_max')[0]?.value).toBeGreaterThan(0);
    const statements = samples(text, 'db_client_operation_duration_seconds_count');
    expect(statements.some(({ labels }) => labels.db_operation_name === 'SELECT')).toBe(true);
    expect(statements.some(({ labels }) => labels.db_query_name === 'session_read')).toBe(true);
    const batches = samples(text, 'storefront_db_batch_rows_count');
    expect(batches.find(({ labels }) => labels.statement === 'cart_store')?.value).toBeGreaterThan(0);
    const sessions = samples(text, 'storefront_checkout_sessions');
    expect(sessions.find(({ labels }) => labels.status === 'ready_for_payment')?.value).toBeGreaterThan(0);
    expect(samples(text, 'storefront_webhook_outbox_depth')).toHaveLength(1);
    for (const name of [
      'nodejs_eventloop_lag_p99_seconds',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
    ])
      expect(samples(text, name).length, name).toBeGreaterThan(0);
  });

  it('counts idempotent replays and conflicts', async () => {
    const key = `metrics-${Date.now()}`;
    const count = async (outcome: string) =>
      samples(await scrape(api), 'storefront_idempotency_outcomes_total').find(
        ({ labels }) => labels.outcome === outcome,
      )?.value ?? 0;
    const [replays, conflicts] = [await count('replayed'), await count('conflict')];
    expect((await createSession(api, ITEMS, key)).status).toBe(201);
    expect((await createSession(api, ITEMS, key)).status).toBe(201);
    expect((await createSession(api, { items: [{ id: 'variant_01tongue2pack', quantity: 2 }] }, key)).status).toBe(422);
    expect(await count('replayed')).toBe(replays + 1);
    expect(await count('conflict')).toBe(conflicts + 1);
  });

  it.skipIf(!haveProm)('is accepted by promtool check metrics', async () => {
    const text = await scrape(api);
    const { code, stdout, stderr } = await run(PROMTOOL, ['check', 'metrics'], text);
    expect({ code, output: stdout + stderr }).toEqual({ code: 0, output: '' });
  });
});

describe('rate-limit refusals', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ env: { METRICS_PORT: '0', RATE_LIMIT_PER_MINUTE: '2' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('are counted per surface', async () => {
    for (let i = 0; i < 4; i++) await api.http('/api/store/regions');
    for (let i = 0; i < 2; i++) await createSession(api, ITEMS);
    const refusals = samples(await scrape(api), 'storefront_rate_limit_refusals_total');
    // One address: 2 reads pass, the other 2 reads and both creates are refused.
    expect(refusals.find(({ labels }) => labels.surface === 'reads')?.value).toBe(2);
    expect(refusals.find(({ labels }) => labels.surface === 'checkout')?.value).toBe(2);
  });
});

describe('background work and fallbacks', () => {
  it('counts the rows the retention sweeps purge', async () => {
    const api = await startTestService({
      env: { METRICS_PORT: '0', RETENTION_SWEEP_SECONDS: '1', RETENTION_UNPAID_SESSIONS_SECONDS: '1' },
    });
    try {
      await createdSession(api, ITEMS);
      const purged = async () =>
        samples(await scrape(api), 'storefront_retention_rows_purged_total').find(
          ({ labels }) => labels.kind === 'unpaidSessions',
        )?.value ?? 0;
      await until(async () => (await purged()) >= 1);
    } finally {
      await api.close();
    }
  }, 60_000);

  it('reports the webhook outbox and its deliveries by outcome', async () => {
    const receiver = await startWebhookReceiver();
    const api = await startTestService({ env: { METRICS_PORT: '0' } });
    try {
      const { deps } = api.service;
      const prompt = (await registerClient(api, { scope: 'orders:read', webhook_url: receiver.url })) as any;
      receiver.secret = prompt.webhook_secret;
      // An endpoint nobody listens on: its delivery fails and waits for its retry, in the outbox.
      const gone = `http://127.0.0.1:${await freePort()}/hooks`;
      const unreachable = (await registerClient(api, { scope: 'orders:read', webhook_url: gone })) as any;
      await enqueueOrderEvent(deps.db, deps, prompt.client_id, 'order.created', { id: 'order_metrics_1' });
      await enqueueOrderEvent(deps.db, deps, unreachable.client_id, 'order.created', { id: 'order_metrics_2' });
      await receiver.waitFor(1);
      const outcome = (text: string, name: string) =>
        samples(text, 'storefront_webhook_deliveries_total').find(({ labels }) => labels.outcome === name)?.value ?? 0;
      await until(async () => outcome(await scrape(api), 'retried') >= 1);
      const text = await scrape(api);
      expect(outcome(text, 'delivered')).toBe(1);
      expect(samples(text, 'storefront_webhook_outbox_depth')[0]?.value).toBe(1);
    } finally {
      await api.close();
      await receiver.close();
    }
  }, 60_000);

  it('counts the rate-limit counts taken in memory while Redis cannot be reached', async () => {
    const api = await startTestService({
      env: { METRICS_PORT: '0', REDIS_URL: `redis://127.0.0.1:${await freePort()}` },
    });
    try {
      for (let i = 0; i < 3; i++) expect((await api.http('/api/store/regions')).status).toBe(200);
      const fallbacks = samples(await scrape(api), 'storefront_redis_fallbacks_total');
      expect(fallbacks.find(({ labels }) => labels.limiter === 'rl')?.value).toBeGreaterThanOrEqual(3);
    } finally {
      await api.close();
    }
  }, 60_000);
});

describe('off unless METRICS_PORT is set', () => {
  it('has no metrics listener', async () => {
    const api = await startTestService();
    try {
      expect(api.service.metricsUrl).toBeUndefined();
      expect(api.service.deps.metrics).toBeUndefined();
    } finally {
      await api.close();
    }
  });
});

describe.skipIf(!haveProm)('a real Prometheus', () => {
  let api: TestService;
  let prometheus: ChildProcess | undefined;
  let dir: string;
  let promUrl: string;

  beforeAll(async () => {
    api = await startTestService({ env: { METRICS_PORT: '0' } });
    dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
    const target = new URL(api.service.metricsUrl!).host;
    writeFileSync(
      join(dir, 'prometheus.yml'),
      `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: storefront\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['${target}']\n`,
    );
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore' },
    );
    await until(async () => (await fetch(`${promUrl}/-/ready`).catch(() => undefined))?.status === 200);
  }, 60_000);
  afterAll(async () => {
    if (prometheus && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
    await api?.close();
  });

  async function query(promql: string): Promise<{ status: string; data: { result: any[] }; error?: string }> {
    const response = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    return (await response.json()) as any;
  }

  it('scrapes the instance and a PromQL query returns the requests this test sent', async () => {
    await until(async () => (await query('up{job="storefront"} == 1')).data.result.length === 1);
    const promql =
      'sum(http_server_request_duration_seconds_count{http_route="/api/store/regions",http_request_method="GET"})';
    const seen = async () => Number((await query(promql)).data.result[0]?.value?.[1]);
    // The series exists from the first request; a rate needs it scraped before the others.
    expect((await api.http('/api/store/regions')).status).toBe(200);
    await until(async () => (await seen()) === 1);
    for (let i = 0; i < 6; i++) expect((await api.http('/api/store/regions')).status).toBe(200);
    await until(async () => (await seen()) === 7);
    const rate = await query(
      'sum(rate(http_server_request_duration_seconds_count{http_route="/api/store/regions"}[1m])) > 0',
    );
    expect(rate.status).toBe('success');
    expect(rate.data.result).toHaveLength(1);
  }, 60_000);

  it("parses every query of docs/operations.md's Grafana dashboard", async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../docs/grafana-dashboard.json', import.meta.url), 'utf8'));
    const expressions: string[] = dashboard.panels.flatMap((panel: any) =>
      (panel.targets ?? []).map((target: any) => target.expr as string),
    );
    expect(expressions.length).toBeGreaterThanOrEqual(4);
    for (const expr of expressions) {
      // Grafana's interval variables, as Grafana would fill them in.
      const answer = await query(expr.replaceAll('$__rate_interval', '1m').replaceAll('$__interval', '15s'));
      expect({ expr, status: answer.status, error: answer.error }).toEqual({
        expr,
        status: 'success',
        error: undefined,
      });
    }
  });
});

function run(file: string, args: string[], input: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(file, args, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(input);
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` every 250 ms until it holds (the test's own timeout bounds the wait). */
async function until(check: () => Promise<boolean>): Promise<void> {
  for (;;) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('an error no step renders', () => {
  // The last resort: a surface's error step that itself fails (here its logger) leaves the error to Koa, which answers
  // a bare 500. The request's metrics series and its log line must both say 500, not what the status held
  // when the error escaped (Koa's default 404).
  const { log, lines } = recordLogLines();
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ env: { METRICS_PORT: '0' }, log });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is counted and logged with the status it is answered with', async () => {
    const { rateLimiter, log } = api.service.deps;
    const broken = vi.spyOn(log, 'child').mockReturnValue({
      error() {
        throw new Error('the logger failed');
      },
    } as never);
    const limiter = (['count', 'consume'] as const)
      .filter((name) => typeof rateLimiter[name] === 'function')
      .map((name) => vi.spyOn(rateLimiter, name).mockRejectedValue(new Error('the limiter failed')));
    const before = await scrape(api);
    try {
      // Not through the contract check: Koa's own text/plain 500 is what this path is left with, and no surface
      // documents it.
      const response = await fetch(new URL('/api/store/regions', api.url), {
        headers: { 'X-Request-Id': 'unrendered-1' },
      });
      expect(response.status).toBe(500);
      await response.arrayBuffer();
    } finally {
      broken.mockRestore();
      for (const spy of limiter) spy.mockRestore();
    }
    const after = await scrape(api);
    expect(
      requestCount(after, '/api/store/regions', 'GET', '500') -
        requestCount(before, '/api/store/regions', 'GET', '500'),
    ).toBe(1);
    expect(requestCount(after, '/api/store/regions', 'GET') - requestCount(before, '/api/store/regions', 'GET')).toBe(
      1,
    );
    const logged = lines.filter((line) => line.msg === 'request' && line.requestId === 'unrendered-1');
    expect(logged).toEqual([expect.objectContaining({ method: 'GET', path: '/api/store/regions', status: 500 })]);
  });
});
