// The public catalogue over real HTTP: every rule of the read API, each bad input, caching and errors.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { statementsDuring } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api?.close();
});

const PRICES = '*variants.calculated_price';
const STOCK = '+variants.inventory_quantity';

async function json(path: string, init?: RequestInit): Promise<{ status: number; body: any; response: Response }> {
  const response = await api.http(path, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, response };
}

describe('GET /api/store/products', () => {
  it('lists both products with variants and no price or stock by default', async () => {
    const { data, response } = await api.client.GET('/api/store/products');
    expect(response.status).toBe(200);
    expect(data!.count).toBe(2);
    expect(data!.limit).toBe(12);
    expect(data!.offset).toBe(0);
    expect(data!.products.map((product) => product.handle)).toEqual([
      'tongue-scraper-2-pack',
      'tongue-scraper-2-pack-travel-cases',
    ]);
    for (const product of data!.products) {
      expect(product.variants).toHaveLength(1);
      expect(product.variants![0]).not.toHaveProperty('calculated_price');
      expect(product.variants![0]).not.toHaveProperty('inventory_quantity');
      expect(product.variants![0]!.id).toMatch(/^variant_/);
      expect(product.id).toMatch(/^prod_/);
    }
  });

  it('adds prices in the default USD region with *variants.calculated_price', async () => {
    const { data } = await api.client.GET('/api/store/products', { params: { query: { fields: PRICES } } });
    const prices = data!.products.map((product) => product.variants![0]!.calculated_price);
    expect(prices).toEqual([
      { calculated_amount: 12.99, currency_code: 'usd', is_calculated_price_tax_inclusive: false },
      { calculated_amount: 19.99, currency_code: 'usd', is_calculated_price_tax_inclusive: false },
    ]);
    expect(data!.products[0]!.variants![0]).not.toHaveProperty('inventory_quantity');
  });

  it('adds stock with +variants.inventory_quantity, whether the + is encoded or arrives as a space', async () => {
    const encoded = await json(`/api/store/products?fields=${encodeURIComponent(STOCK)}`);
    const literal = await json(`/api/store/products?fields=+variants.inventory_quantity`);
    for (const { status, body } of [encoded, literal]) {
      expect(status).toBe(200);
      expect(body.products.map((product: any) => product.variants[0].inventory_quantity)).toEqual([240, 85]);
      expect(body.products[0].variants[0]).not.toHaveProperty('calculated_price');
    }
  });

  it('combines prices and stock', async () => {
    const { data } = await api.client.GET('/api/store/products', {
      params: { query: { fields: `${PRICES},${STOCK}` } },
    });
    expect(data!.products[1]!.variants![0]).toMatchObject({
      inventory_quantity: 85,
      calculated_price: { calculated_amount: 19.99 },
    });
  });

  it.each([
    ['reg_eu', 'eur', [11.99, 18.99]],
    ['reg_gb', 'gbp', [10.99, 16.99]],
    ['reg_ca', 'cad', [16.99, 25.99]],
    ['reg_jp', 'jpy', [1900, 2900]],
  ])('prices in region %s (%s), in major units rounded to the currency', async (region_id, currency, amounts) => {
    const { data } = await api.client.GET('/api/store/products', { params: { query: { fields: PRICES, region_id } } });
    const prices = data!.products.map((product) => product.variants![0]!.calculated_price!);
    expect(prices.map((price) => price.currency_code)).toEqual([currency, currency]);
    expect(prices.map((price) => price.calculated_amount)).toEqual(amounts);
  });

  it('pages with limit and offset; count is the total matching', async () => {
    const first = await api.client.GET('/api/store/products', { params: { query: { limit: 1 } } });
    const second = await api.client.GET('/api/store/products', { params: { query: { limit: 1, offset: 1 } } });
    const beyond = await api.client.GET('/api/store/products', { params: { query: { limit: 1, offset: 5 } } });
    expect(first.data!.products.map((p) => p.handle)).toEqual(['tongue-scraper-2-pack']);
    expect(second.data!.products.map((p) => p.handle)).toEqual(['tongue-scraper-2-pack-travel-cases']);
    expect(beyond.data!.products).toEqual([]);
    expect([first.data!.count, second.data!.count, beyond.data!.count]).toEqual([2, 2, 2]);
    expect(second.data).toMatchObject({ limit: 1, offset: 1 });
  });

  it('filters by handle', async () => {
    const { data } = await api.client.GET('/api/store/products', {
      params: { query: { handle: 'tongue-scraper-2-pack-travel-cases' } },
    });
    expect(data!.count).toBe(1);
    expect(data!.products[0]!.title).toContain('Travel Cases');
    const none = await api.client.GET('/api/store/products', { params: { query: { handle: 'no-such-thing' } } });
    expect(none.data).toMatchObject({ products: [], count: 0 });
  });

  it('selects only named fields with bare names, and removes with -', async () => {
    const bare = await json('/api/store/products?fields=title,handle');
    expect(Object.keys(bare.body.products[0]).sort()).toEqual(['handle', 'id', 'title']);
    const barePrice = await json(`/api/store/products?fields=handle,${encodeURIComponent(PRICES)}`);
    expect(Object.keys(barePrice.body.products[0]).sort()).toEqual(['handle', 'id', 'variants']);
    expect(Object.keys(barePrice.body.products[0].variants[0]).sort()).toEqual(['calculated_price', 'id']);
    const removed = await json('/api/store/products?fields=-description,-variants.sku');
    expect(removed.body.products[0]).not.toHaveProperty('description');
    expect(removed.body.products[0].variants[0]).not.toHaveProperty('sku');
    expect(removed.body.products[0]).toHaveProperty('material');
    const noVariants = await json('/api/store/products?fields=-variants');
    expect(noVariants.body.products[0]).not.toHaveProperty('variants');
  });

  it.each([
    ['fields', 'bogus', 'bogus'],
    ['fields', '*variants.cost_price', 'variants.cost_price'],
    ['fields', '*options', 'options'],
    ['fields', '-id', 'id'],
    ['region_id', 'reg_mars', 'reg_mars'],
  ])('rejects %s=%s with 400 naming the parameter', async (param, value, mentioned) => {
    const { status, body } = await json(`/api/store/products?${param}=${encodeURIComponent(value)}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_parameter', param });
    expect(body.error.message).toContain(mentioned);
    expect(body.error.resolution).toBeTruthy();
  });

  it.each([
    ['limit', '0'],
    ['limit', '101'],
    ['limit', '1.5'],
    ['limit', 'ten'],
    ['offset', '-1'],
    ['offset', 'x'],
    ['handle', ''],
    ['color', 'red'],
  ])('rejects %s=%s with 400 naming the parameter', async (param, value) => {
    const { status, body } = await json(`/api/store/products?${param}=${encodeURIComponent(value)}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_parameter', param });
  });

  it('accepts the bounds of limit and offset', async () => {
    for (const query of ['limit=1', 'limit=100', 'offset=0']) {
      expect((await json(`/api/store/products?${query}`)).status).toBe(200);
    }
  });
});

describe('GET /api/store/products/{id}', () => {
  it('returns the product with the same region and fields rules', async () => {
    const { data } = await api.client.GET('/api/store/products/{id}', {
      params: { path: { id: 'prod_01tonguetravel' }, query: { region_id: 'reg_gb', fields: `${PRICES},${STOCK}` } },
    });
    expect(data!.product).toMatchObject({
      id: 'prod_01tonguetravel',
      handle: 'tongue-scraper-2-pack-travel-cases',
      material: expect.stringContaining('316L'),
      variants: [
        {
          sku: 'TS-316L-2PK-TC',
          manage_inventory: true,
          allow_backorder: false,
          inventory_quantity: 85,
          calculated_price: { calculated_amount: 16.99, currency_code: 'gbp' },
        },
      ],
    });
    expect(data!.product.description).toMatch(/^<p>/);
    expect(data!.product.thumbnail).toMatch(/^https:\/\//);
  });

  it('answers 404 not_found for an unknown id', async () => {
    const { status, body } = await json('/api/store/products/prod_nope');
    expect(status).toBe(404);
    expect(body.error.code).toBe('not_found');
  });

  it('validates fields and region on the single product too', async () => {
    expect((await json('/api/store/products/prod_01tonguetravel?fields=nope')).body.error.param).toBe('fields');
    expect((await json('/api/store/products/prod_01tonguetravel?region_id=reg_zz')).body.error.param).toBe('region_id');
  });
});

describe('GET /api/store/reviews', () => {
  it('returns every review of the store with the mean rating', async () => {
    const { data } = await api.client.GET('/api/store/reviews');
    expect(data!.count).toBe(data!.reviews.length);
    expect(data!.count).toBeGreaterThanOrEqual(8);
    const mean = data!.reviews.reduce((sum, review) => sum + review.rating, 0) / data!.count;
    expect(data!.avg_rating).toBe(Math.round(mean * 100) / 100);
    const dates = data!.reviews.map((review) => review.review_date);
    expect(dates).toEqual([...dates].sort().reverse());
    expect(data!.reviews.some((review) => !review.verified)).toBe(true);
  });

  it('filters by product', async () => {
    const { data } = await api.client.GET('/api/store/reviews', {
      params: { query: { product_id: 'prod_01tonguetravel' } },
    });
    expect(data!.reviews.every((review) => review.product_id === 'prod_01tonguetravel')).toBe(true);
    expect(data!.count).toBe(4);
    expect(data!.avg_rating).toBe(4.25);
  });

  it('answers an empty list with avg_rating 0 for a product without reviews', async () => {
    const { data } = await api.client.GET('/api/store/reviews', { params: { query: { product_id: 'prod_unknown' } } });
    expect(data).toEqual({ reviews: [], count: 0, avg_rating: 0 });
  });
});

describe('GET /api/store/regions and /api/store/collections', () => {
  it('lists the regions with currencies and countries, USD first', async () => {
    const { data } = await api.client.GET('/api/store/regions');
    expect(data!.regions.map((region) => [region.id, region.currency_code])).toEqual([
      ['reg_us', 'usd'],
      ['reg_eu', 'eur'],
      ['reg_gb', 'gbp'],
      ['reg_ca', 'cad'],
      ['reg_jp', 'jpy'],
    ]);
    const eu = data!.regions.find((region) => region.id === 'reg_eu')!;
    expect(eu.countries.length).toBeGreaterThanOrEqual(4);
    expect(eu.countries).toContainEqual({ iso_2: 'de', display_name: 'Germany' });
  });

  it('lists collections and filters them by handle', async () => {
    const all = await api.client.GET('/api/store/collections');
    expect(all.data!.collections).toEqual([{ id: 'pcol_01tonguecare', title: 'Tongue Care', handle: 'tongue-care' }]);
    const none = await api.client.GET('/api/store/collections', { params: { query: { handle: 'nope' } } });
    expect(none.data!.collections).toEqual([]);
  });

  it('rejects unknown query parameters', async () => {
    const { status, body } = await json('/api/store/regions?currency=usd');
    expect(status).toBe(400);
    expect(body.error.param).toBe('currency');
  });
});

describe('caching', () => {
  it('marks reads public for 60 s with an ETag, and answers 304 to a matching If-None-Match', async () => {
    const first = await api.http('/api/store/products?fields=*variants.calculated_price');
    expect(first.headers.get('cache-control')).toBe('public, max-age=60');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/".+"$/);
    const again = await api.http('/api/store/products?fields=*variants.calculated_price', {
      headers: { 'If-None-Match': etag },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    const other = await api.http('/api/store/products', { headers: { 'If-None-Match': etag } });
    expect(other.status).toBe(200);
  });

  it('serves repeated reads from the in-process cache without touching the database', async () => {
    const path = '/api/store/products?limit=2&fields=*variants.calculated_price';
    const catalogueStatements = (run: () => Promise<unknown>) =>
      statementsDuring(api.service.deps.db, ['products', 'variants', 'regions'], run);
    expect(await catalogueStatements(() => api.http(path))).toBeGreaterThan(0);
    expect(
      await catalogueStatements(async () => {
        await api.http(path);
        await api.http(path, { headers: { 'If-None-Match': 'W/"other"' } });
      }),
    ).toBe(0);
  });

  it('keeps one cache: once it is cleared, a read shows what the database holds now', async () => {
    const path = `/api/store/products?handle=tongue-scraper-2-pack&fields=${encodeURIComponent(STOCK)}`;
    const stock = async () => (await json(path)).body.products[0].variants[0].inventory_quantity as number;
    const variants = () => api.service.deps.db('variants').where({ id: 'variant_01tongue2pack' });
    const before = await stock();
    await variants().update({ inventory_quantity: before - 7 });
    try {
      expect(await stock()).toBe(before); // the representation, up to 60 s old
      api.service.deps.readCache.clear();
      expect(await stock()).toBe(before - 7); // no query result kept behind it
    } finally {
      await variants().update({ inventory_quantity: before });
      api.service.deps.readCache.clear();
    }
  });

  it('tells caches in front how old a representation is (Age), so max-age=60 bounds its age end to end', async () => {
    api.service.deps.readCache.clear();
    const fresh = Number((await api.http('/api/store/regions')).headers.get('age'));
    expect(fresh).toBeLessThanOrEqual(1);
    // 42 s later by the clock (timers untouched): the same representation, 42 s older.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 42_000 });
    try {
      const later = Number((await api.http('/api/store/regions')).headers.get('age'));
      expect(later).toBeGreaterThanOrEqual(42);
      expect(later).toBeLessThanOrEqual(43 + fresh);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never caches errors', async () => {
    const response = await api.http('/api/store/products?limit=0');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

describe('unknown paths and methods', () => {
  it.each(['/nope', '/api/store', '/api/store/products/a/b', '/api/store/orders'])(
    'answers JSON 404 unknown_endpoint for %s',
    async (path) => {
      const { status, body, response } = await json(path);
      expect(status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(body.error.code).toBe('unknown_endpoint');
    },
  );

  it('answers HEAD like GET, without a body', async () => {
    for (const path of ['/api/store/products?limit=1', '/api/store/collections', '/healthz', '/openapi.json']) {
      const get = await api.http(path);
      const head = await api.http(path, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe('');
      expect(head.headers.get('etag')).toBe(get.headers.get('etag'));
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    }
  });

  it('routes as the contract reads its paths: long ids reach validation, empty segments match no operation', async () => {
    // Far past a router's default parameter length: still the operation's own 400 naming the parameter.
    const long = await json(`/api/store/products/${'p'.repeat(150)}`);
    expect([long.status, long.body.error.code, long.body.error.param]).toEqual([400, 'invalid_parameter', 'id']);
    const empty = await json('/checkout_sessions//cancel', { method: 'POST' });
    expect([empty.status, empty.body.code]).toEqual([404, 'unknown_endpoint']);
  });

  it('answers JSON 405 with Allow for a wrong method', async () => {
    const { status, body, response } = await json('/api/store/products', { method: 'DELETE' });
    expect(status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(body.error.code).toBe('method_not_allowed');
  });
});

describe('operations', () => {
  it('reports liveness and readiness', async () => {
    expect((await json('/healthz')).body).toEqual({ status: 'ok' });
    expect((await json('/readyz')).body).toEqual({ status: 'ready', database: 'up' });
  });

  it('publishes the bundled contract and the HTML reference', async () => {
    const contract = await json('/openapi.json');
    expect(contract.body.openapi).toBe('3.1.0');
    expect(Object.keys(contract.body.paths)).toContain('/api/store/products');
    const docs = await api.http('/docs');
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await docs.text();
    expect(html).toContain('<html');
    expect(html).not.toMatch(/<script[^>]+src="https?:|fonts\.googleapis/);
  });

  it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
    expect((await api.http('/healthz', { headers: { 'X-Request-Id': 'trace-123' } })).headers.get('x-request-id')).toBe(
      'trace-123',
    );
    expect(
      (await api.http('/healthz', { headers: { 'X-Request-Id': 'bad id\twith spaces' } })).headers.get('x-request-id'),
    ).toMatch(/^[0-9a-f-]{36}$/);
  });
});
