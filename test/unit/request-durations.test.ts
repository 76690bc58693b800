// The request duration histogram (src/metrics.ts): its series are resolved once per label set and observed without
// prom-client's per-call work, so its scrape is checked against prom-client's own Histogram fed the same requests:
// the same lines, in the text format and in the registry's JSON, and the requests in flight read when scraped.
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
