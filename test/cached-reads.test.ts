// Cacheable catalogue reads (x-cacheable in the contract): what each is answered, the first time (from the database)
// and again while its representation is in the read cache: the same status, Cache-Control, ETag, Age, RateLimit-*,
// CORS, request id, body and log line either way; 304 for a matching If-None-Match, HEAD without a body, the 429 of
// an address over its limit, other spellings of a cached URL, what is never served from the cache, and a drain.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import {
  childLoggersDuring,
  expectAnswer,
  JSON_BODY,
  NOT_STORED,
  PUBLIC_CORS,
  PUBLIC_PREFLIGHT,
  rateLimit,
  rateLimited,
  recordedService,
  SECONDS,
  whileDraining,
  type Answer,
  type Init,
} from './support/answers.js';

const LIMIT = 4;
const PRODUCTS = '/api/store/products?fields=*variants.calculated_price,+variants.inventory_quantity';
const PRODUCT = '/api/store/products/prod_01tongue2pack?fields=*variants.calculated_price';
const RETIRING = '/api/store/collections';
const TWO_PACK = 'prod_01tongue2pack';
const TRAVEL = 'prod_01tonguetravel';

const api = recordedService({
  limit: LIMIT,
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
const { requests } = api;
const send = (path: string, init: Init = {}, address?: string) => requests.send(api, path, init, address);

/** The request answered from the database (the read cache emptied), then again once a GET of `fill` was cached. */
async function uncachedThenCached(path: string, init: Init = {}, fill = path) {
  api.service.deps.readCache.clear();
  const uncached = await send(path, init);
  await send(fill);
  const cached = await send(path, init);
  return [uncached, cached] as const;
}

/** The headers of a cacheable read's 200 (or 304) to a fresh address. */
function cacheable(etag: unknown = WEAK_ETAG) {
  return {
    ...PUBLIC_CORS,
    ...JSON_BODY,
    ...rateLimit(LIMIT, LIMIT - 1),
    'cache-control': 'public, max-age=60',
    etag,
    age: SECONDS,
  };
}
const WEAK_ETAG = expect.stringMatching(/^W\/"[\w-]{27}"$/);

/** A products list: the products in the catalogue's order, each variant with the fields asked for. */
const productsList = (ids: string[], variant: Record<string, unknown>) => ({
  products: ids.map((id) => expect.objectContaining({ id, variants: [expect.objectContaining(variant)] })),
  count: 2,
  offset: expect.any(Number),
  limit: expect.any(Number),
});

const BODIES: Record<string, unknown> = {
  [PRODUCTS]: productsList([TWO_PACK, TRAVEL], {
    calculated_price: expect.objectContaining({ currency_code: 'usd' }),
    inventory_quantity: expect.any(Number),
  }),
  [PRODUCT]: {
    product: expect.objectContaining({
      id: TWO_PACK,
      handle: 'tongue-scraper-2-pack',
      variants: [expect.objectContaining({ calculated_price: expect.objectContaining({ calculated_amount: 12.99 }) })],
    }),
  },
  '/api/store/products?limit=1&offset=1': {
    ...productsList([TRAVEL], { id: 'variant_01tonguetravel', sku: 'TS-316L-2PK-TC' }),
    offset: 1,
    limit: 1,
  },
  '/api/store/regions': {
    regions: ['reg_us', 'reg_eu', 'reg_gb', 'reg_ca', 'reg_jp'].map((id) => expect.objectContaining({ id })),
  },
  '/api/store/reviews?product_id=prod_01tongue2pack': expect.objectContaining({
    reviews: expect.arrayContaining([expect.objectContaining({ id: 'rev_01a7k3', product_id: TWO_PACK })]),
  }),
};

describe('a cacheable read, from the database and from the cache', () => {
  it.each([
    ['the products list with prices and stock', PRODUCTS, {}],
    ['a product by id with prices', PRODUCT, {}],
    ['another page', '/api/store/products?limit=1&offset=1', {}],
    ['the regions', '/api/store/regions', {}],
    ['the reviews of a product', '/api/store/reviews?product_id=prod_01tongue2pack', {}],
    ['a browser request with an Origin', PRODUCTS, { headers: { Origin: 'https://shop.example' } }],
    ['If-None-Match with another ETag', PRODUCTS, { headers: { 'If-None-Match': 'W/"other"' } }],
  ])('%s: 200, public for a minute, with its ETag', async (_name, path, init: Init) => {
    const answers = await uncachedThenCached(path, init);
    for (const answer of answers) expectAnswer(answer, { status: 200, headers: cacheable(), body: BODIES[path] });
    expect(answers[1].headers.etag).toBe(answers[0].headers.etag);
    expect(answers[1].text).toBe(answers[0].text);
  });

  it('HEAD: the GET’s headers, Content-Length included, without a body', async () => {
    const get = await api.http(PRODUCTS, { headers: { 'X-Forwarded-For': requests.newAddress() } });
    const length = get.headers.get('content-length');
    expect(Number(length)).toBe(Buffer.byteLength(await get.text()));
    for (const answer of await uncachedThenCached(PRODUCTS, { method: 'HEAD' })) {
      // Node closes the connection after a HEAD that announces a body it does not send.
      expectAnswer(answer, { status: 200, headers: { ...cacheable(get.headers.get('etag')), connection: 'close' } });
      expect(answer.text).toBe('');
    }
    const head = await api.http(PRODUCTS, { method: 'HEAD', headers: { 'X-Forwarded-For': requests.newAddress() } });
    expect(head.headers.get('content-length')).toBe(length);
  });

  it.each([
    ['the caller’s own request id, echoed', 'trace-42.a:b', 'trace-42.a:b'],
    ['an unsafe request id, replaced by a new one', 'no spaces allowed', undefined],
  ])('%s', async (_name, sent, echoed) => {
    const answers = await uncachedThenCached(PRODUCTS, { headers: { 'X-Request-Id': sent } });
    for (const answer of answers) {
      expectAnswer(answer, {
        status: 200,
        headers: { ...cacheable(), ...(echoed ? { 'x-request-id': echoed } : {}) },
        body: BODIES[PRODUCTS],
      });
    }
    if (!echoed) expect(answers[1].headers['x-request-id']).not.toBe(answers[0].headers['x-request-id']);
  });

  it.each([
    ['the ETag it was given', (etag: string) => etag],
    ['*', () => '*'],
    ['a list that holds it', (etag: string) => `W/"other", ${etag}`],
  ])('304 Not Modified for If-None-Match: %s, with the 200’s caching headers', async (_name, match) => {
    const etag = (await send(PRODUCTS)).headers.etag!;
    for (const answer of await uncachedThenCached(PRODUCTS, { headers: { 'If-None-Match': match(etag) } })) {
      const { 'content-type': _type, ...headers } = cacheable(etag);
      expectAnswer(answer, { status: 304, headers });
      expect(answer.text).toBe('');
    }
  });

  it('the 429 of an address over its limit, cached or not, with Retry-After', async () => {
    const address = requests.newAddress();
    api.service.deps.readCache.clear();
    for (let sent = 0; sent < LIMIT; sent++) {
      expectAnswer(await send(PRODUCTS, {}, address), {
        status: 200,
        headers: { ...cacheable(), ...rateLimit(LIMIT, LIMIT - 1 - sent) },
      });
    }
    const overCached = await send(PRODUCTS, {}, address);
    api.service.deps.readCache.clear();
    const overUncached = await send(PRODUCTS, {}, address);
    for (const answer of [overCached, overUncached]) {
      expectAnswer(answer, {
        status: 429,
        headers: { ...PUBLIC_CORS, ...JSON_BODY, ...NOT_STORED, ...rateLimited(LIMIT) },
        body: {
          error: {
            code: 'rate_limited',
            message: `Rate limit of ${LIMIT} requests per minute exceeded.`,
            resolution: 'Wait for the number of seconds in Retry-After, then retry.',
          },
        },
      });
    }
  });
});

describe('another spelling of a cached URL is answered as the URL itself', () => {
  it.each([
    [
      'fields percent-encoded',
      PRODUCTS,
      '/api/store/products?fields=%2Avariants.calculated_price,%2Bvariants.inventory_quantity',
      undefined,
    ],
    [
      'parameters reordered, defaults spelled out, tokens repeated',
      PRODUCTS,
      '/api/store/products?limit=12&fields=+variants.inventory_quantity,*variants.calculated_price,&offset=0',
      undefined,
    ],
    [
      'an id percent-encoded, a trailing slash',
      PRODUCT,
      '/api/store/products/prod%5F01tongue2pack/?fields=*variants.calculated_price',
      // The log names the path as it was sent.
      '/api/store/products/prod%5F01tongue2pack/',
    ],
  ])('%s', async (_name, canonical, spelling, loggedPath) => {
    const etag = (await send(canonical)).headers.etag!;
    for (const answer of await uncachedThenCached(spelling, {}, canonical)) {
      expectAnswer(answer, { status: 200, headers: cacheable(etag), body: BODIES[canonical], loggedPath });
    }
  });
});

describe('requests the cache does not answer', () => {
  const refusal = (message: string, param: string) => ({
    error: {
      code: 'invalid_parameter',
      message,
      resolution: 'Fix the named parameter; do not retry the request unchanged.',
      param,
    },
  });
  const refused = { ...PUBLIC_CORS, ...JSON_BODY, ...NOT_STORED, ...rateLimit(LIMIT, LIMIT - 1) };

  it.each([
    [
      'an If-None-Match the contract rejects',
      PRODUCTS,
      { headers: { 'If-None-Match': 'x'.repeat(1025) } },
      refusal('If-None-Match must NOT have more than 1024 characters.', 'If-None-Match'),
    ],
    [
      'an unknown query parameter',
      '/api/store/products?colour=red',
      {},
      refusal('colour is not a recognised parameter.', 'colour'),
    ],
  ])('%s: 400 invalid_parameter, not stored', async (_name, path, init: Init, body) => {
    for (const answer of await uncachedThenCached(path, init, PRODUCTS)) {
      expectAnswer(answer, { status: 400, headers: refused, body });
    }
  });

  // The route is retiring, however its path is spelled (the router ignores a trailing slash).
  it.each([RETIRING, `${RETIRING}/`])(
    'a retiring endpoint, %s: Deprecation, Sunset and a Link to the changelog',
    async (path) => {
      for (const answer of await uncachedThenCached(path)) {
        expectAnswer(answer, {
          status: 200,
          headers: {
            ...cacheable(),
            deprecation: '@1793491200',
            sunset: 'Mon, 01 Mar 2027 00:00:00 GMT',
            link: '<http://localhost:0/changelog>; rel="deprecation"; type="application/json"',
          },
          body: { collections: [{ id: 'pcol_01tonguecare', title: 'Tongue Care', handle: 'tongue-care' }] },
        });
      }
    },
  );

  it('a CORS preflight: 204 with what may be sent, not counted', async () => {
    const preflight = {
      method: 'OPTIONS',
      headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' },
    };
    for (const answer of await uncachedThenCached(PRODUCTS, preflight)) {
      expectAnswer(answer, { status: 204, headers: { ...PUBLIC_PREFLIGHT, ...NOT_STORED } });
      expect(answer.text).toBe('');
    }
  });
});

describe('on the wire', () => {
  /** The header names of a GET of `path` as they arrive, in order, duplicates kept (what `fetch` merges). */
  function headerNames(path: string, headers: Record<string, string> = {}): Promise<string[]> {
    const { port } = new URL(api.url);
    const forwarded = { 'X-Forwarded-For': requests.newAddress(), ...headers };
    return new Promise((resolve, reject) => {
      request({ host: '127.0.0.1', port, path, headers: forwarded }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.rawHeaders.filter((_value, index) => index % 2 === 0)));
      })
        .on('error', reject)
        .end();
    });
  }

  // Whether the headers are written from one list or set one by one, a cached read carries each of them once, in the
  // order its steps set them: the door's, CORS, the limiter's, then the representation's.
  it('a cached read and its 304: each header once, in the order the steps set them', async () => {
    await send(PRODUCTS);
    const opening = [
      'X-Request-Id',
      'X-Content-Type-Options',
      'Referrer-Policy',
      'Content-Security-Policy',
      'Cache-Control',
      'Vary',
      'Access-Control-Allow-Origin',
      'Access-Control-Expose-Headers',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'ETag',
    ];
    const closing = ['Date', 'Connection', 'Keep-Alive'];
    expect(await headerNames(PRODUCTS)).toEqual([...opening, 'Content-Type', 'Content-Length', 'Age', ...closing]);
    expect(await headerNames(PRODUCTS, { 'If-None-Match': '*' })).toEqual([...opening, 'Age', ...closing]);
  });
});

describe('while the service drains', () => {
  it('a cached read is answered as ever, with Connection: close', async () => {
    await send(PRODUCTS);
    const answer: Answer = await whileDraining(api, () => send(PRODUCTS));
    expectAnswer(answer, { status: 200, headers: { ...cacheable(), connection: 'close' }, body: BODIES[PRODUCTS] });
  });
});

describe('logging', () => {
  it('makes no pino child logger per request', async () => {
    const children = await childLoggersDuring(api, async () => {
      await uncachedThenCached(PRODUCTS);
      await uncachedThenCached('/api/store/products?limit=0'); // a 400, logged in its one line
    });
    expect(children).toBe(0);
  });
});
