// Cached reads are answered before Koa (src/http/fast-reads.ts), with the reads surface's steps written again, lean.
// This file holds the two paths equal: the same request is answered once by the general chain (the read cache just
// emptied) and once more with the cache filled, and the status, every header but Date and a generated request id,
// the body and the log line must not differ (test/support/lean-paths.ts).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectSame, probeLeanPaths, type Init } from './support/lean-paths.js';
import { startTestService, type TestService } from './support/service.js';

const LIMIT = 4;
const PRODUCTS = '/api/store/products?fields=*variants.calculated_price,+variants.inventory_quantity';
const PRODUCT = '/api/store/products/prod_01tongue2pack?fields=*variants.calculated_price';
const RETIRING = '/api/store/collections';

let api: TestService;
const probe = probeLeanPaths();
const newAddress = probe.newAddress;
const send = (path: string, init: Init, address: string) => probe.send(api, path, init, address);

beforeAll(async () => {
  api = await startTestService({
    // One proxy: X-Forwarded-For names the client, so each request below can count against an address of its own.
    env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT) },
    log: probe.log,
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
  probe.restore();
});

/** The same request by the general chain (empty cache) and then with its URL in the cache, from fresh addresses. */
async function bothPaths(path: string, init: Init = {}) {
  api.service.deps.readCache.clear();
  const general = await send(path, init, newAddress());
  await api.http(path, { headers: { 'X-Forwarded-For': newAddress() } }); // fills the cache, if the URL is cacheable
  const second = await send(path, init, newAddress());
  return { general, second };
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
  ])('%s', async (_name, path, init: Init) => {
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

describe('another spelling of a cached read is answered before Koa, as the general chain answers it', () => {
  it.each([
    [
      'fields percent-encoded',
      PRODUCTS,
      '/api/store/products?fields=%2Avariants.calculated_price,%2Bvariants.inventory_quantity',
    ],
    [
      'parameters reordered, defaults spelled out, tokens repeated',
      PRODUCTS,
      '/api/store/products?limit=12&fields=+variants.inventory_quantity,*variants.calculated_price,&offset=0',
    ],
    [
      'an id percent-encoded, a trailing slash',
      PRODUCT,
      '/api/store/products/prod%5F01tongue2pack/?fields=*variants.calculated_price',
    ],
  ])('%s', async (_name, filledBy, path) => {
    api.service.deps.readCache.clear();
    const general = await send(path, {}, newAddress());
    api.service.deps.readCache.clear();
    await api.http(filledBy, { headers: { 'X-Forwarded-For': newAddress() } });
    const fast = await send(path, {}, newAddress());
    expect([general.status, general.viaKoa, fast.viaKoa]).toEqual([200, true, false]);
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
  ])('%s', async (_name, path, init: Init, status) => {
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
