// Cached reads are answered before Koa (src/http/fast-reads.ts), with the reads surface's steps written again, lean.
// This file holds the two paths equal: the same request is answered once by the general chain (the read cache just
// emptied) and once more with the cache filled, and the status, every header but Date and a generated request id,
// the body and the log line must not differ. Koa's createContext is counted to know which path answered.
import { Writable } from 'node:stream';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../src/log.js';
import { startTestService, type TestService } from './support/service.js';

const LIMIT = 4;
const PRODUCTS = '/api/store/products?fields=*variants.calculated_price,+variants.inventory_quantity';
const PRODUCT = '/api/store/products/prod_01tongue2pack?fields=*variants.calculated_price';
const RETIRING = '/api/store/collections';

let api: TestService;
const logLines: Array<Record<string, unknown>> = [];
const createContext = vi.spyOn(Koa.prototype, 'createContext');

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  api = await startTestService({
    // One proxy: X-Forwarded-For names the client, so each request below can count against an address of its own.
    env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT) },
    log: createLogger('info', sink),
    deprecations: [
      {
        subject: `GET ${RETIRING}`,
        method: 'GET',
        path: /^\/api\/store\/collections$/,
        deprecatedAt: '2026-11-01',
        sunsetAt: '2027-03-01',
        description: 'Test-only retirement.',
      },
    ],
  });
});
afterAll(async () => {
  await api?.close();
  createContext.mockRestore();
});

let addresses = 0;
const newAddress = () => `198.51.${Math.floor(++addresses / 250)}.${addresses % 250}`;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The request's log line, without what differs per request. */
  logged: Record<string, unknown> | undefined;
  viaKoa: boolean;
}

/** Differ between any two requests: the clock, and a request id the service generates. */
const PER_REQUEST = new Set(['date', 'x-request-id']);

async function send(path: string, init: RequestInit & { headers?: Record<string, string> }, address: string) {
  const contexts = createContext.mock.calls.length;
  const response = await api.http(path, { ...init, headers: { ...init.headers, 'X-Forwarded-For': address } });
  const body = await response.text();
  // A request id the caller sent and got back is compared; one the service generated is not.
  const keepsRequestId = response.headers.get('x-request-id') === init.headers?.['X-Request-Id'];
  const headers = Object.fromEntries(
    [...response.headers].filter(([name]) => !PER_REQUEST.has(name) || (name === 'x-request-id' && keepsRequestId)),
  );
  const requestId = response.headers.get('x-request-id');
  const line = logLines.find((entry) => entry.requestId === requestId && entry.msg === 'request');
  const { time: _time, ms: _ms, requestId: _id, ...logged } = line ?? {};
  return {
    status: response.status,
    headers,
    body,
    logged: line ? logged : undefined,
    viaKoa: createContext.mock.calls.length > contexts,
  } satisfies Answer;
}

/** The same request by the general chain (empty cache) and then with its URL in the cache, from fresh addresses. */
async function bothPaths(path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  api.service.deps.readCache.clear();
  const general = await send(path, init, newAddress());
  await api.http(path, { headers: { 'X-Forwarded-For': newAddress() } }); // fills the cache, if the URL is cacheable
  const second = await send(path, init, newAddress());
  return { general, second };
}

/** Count seconds, and may tick between two requests: compared to within one. */
const TICKING = ['age', 'ratelimit-reset', 'retry-after'];

/** The two answers are the same but for the path that gave them and a second's tick. */
function expectSame(second: Answer, general: Answer) {
  const [{ viaKoa: _second, ...one }, { viaKoa: _general, ...other }] = [
    structuredClone(second),
    structuredClone(general),
  ];
  for (const name of TICKING) {
    expect(name in one.headers).toBe(name in other.headers);
    expect(Math.abs(Number(one.headers[name] ?? 0) - Number(other.headers[name] ?? 0))).toBeLessThanOrEqual(1);
    delete one.headers[name];
    delete other.headers[name];
  }
  expect(one).toEqual(other);
}

describe('a cached read is answered before Koa exactly as the general chain answers it', () => {
  let etag: string;
  beforeAll(async () => {
    etag = (await api.http(PRODUCTS)).headers.get('etag')!;
  });

  it.each([
    ['the products list with prices and stock', PRODUCTS, {}],
    ['a product by id with prices', PRODUCT, {}],
    ['another page', '/api/store/products?limit=1&offset=1', {}],
    ['the regions', '/api/store/regions', {}],
    ['the reviews of a product', '/api/store/reviews?product_id=prod_01tongue2pack', {}],
    ['HEAD', PRODUCTS, { method: 'HEAD' }],
    ['a browser request with an Origin', PRODUCTS, { headers: { Origin: 'https://shop.example' } }],
    ['the caller’s own request id', PRODUCTS, { headers: { 'X-Request-Id': 'trace-42.a:b' } }],
    ['an unsafe request id, replaced', PRODUCTS, { headers: { 'X-Request-Id': 'no spaces allowed' } }],
    ['If-None-Match with another ETag', PRODUCTS, { headers: { 'If-None-Match': 'W/"other"' } }],
    ['If-None-Match: *', PRODUCTS, { headers: { 'If-None-Match': '*' } }],
  ])('%s', async (_name, path, init: RequestInit & { headers?: Record<string, string> }) => {
    const { general, second } = await bothPaths(path, init);
    expect(general.viaKoa).toBe(true);
    expect(second.viaKoa).toBe(false);
    expect(general.logged).toBeDefined();
    expectSame(second, general);
  });

  it('304 for a matching If-None-Match', async () => {
    const { general, second } = await bothPaths(PRODUCTS, { headers: { 'If-None-Match': etag } });
    expect(general.status).toBe(304);
    expect(second.viaKoa).toBe(false);
    expectSame(second, general);
  });

  it('the 429 of an address over its limit', async () => {
    const address = newAddress();
    api.service.deps.readCache.clear();
    for (let sent = 0; sent < LIMIT; sent++) expect((await send(PRODUCTS, {}, address)).status).toBe(200);
    const fast = await send(PRODUCTS, {}, address);
    api.service.deps.readCache.clear();
    const general = await send(PRODUCTS, {}, address);
    expect([fast.status, fast.viaKoa, general.status, general.viaKoa]).toEqual([429, false, 429, true]);
    expectSame(fast, general);
  });
});

describe('what the fast path leaves to the general chain', () => {
  it.each([
    ['an If-None-Match the contract rejects', PRODUCTS, { headers: { 'If-None-Match': 'x'.repeat(1025) } }, 400],
    ['a retiring endpoint (Deprecation, Sunset, Link)', RETIRING, {}, 200],
    [
      'a CORS preflight',
      PRODUCTS,
      { method: 'OPTIONS', headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' } },
      204,
    ],
    ['an unknown query parameter', '/api/store/products?colour=red', {}, 400],
  ])('%s', async (_name, path, init: RequestInit & { headers?: Record<string, string> }, status) => {
    const { general, second } = await bothPaths(path, init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, true]);
    expectSame(second, general);
    if (path === RETIRING) expect(second.headers).toHaveProperty('deprecation');
  });

  it('while draining, so that every response carries Connection: close', async () => {
    await api.http(PRODUCTS);
    api.service.deps.lifecycle.draining = true;
    try {
      const answer = await send(PRODUCTS, {}, newAddress());
      expect(answer.viaKoa).toBe(true);
      expect(answer.status).toBe(200);
    } finally {
      api.service.deps.lifecycle.draining = false;
    }
  });
});

describe('logging', () => {
  it('makes no pino child logger per request', async () => {
    const child = vi.spyOn(api.service.deps.log, 'child');
    try {
      await bothPaths(PRODUCTS);
      await bothPaths('/api/store/products?limit=0'); // a 400, logged by the general chain's one line
      expect(child).not.toHaveBeenCalled();
    } finally {
      child.mockRestore();
    }
  });
});
