// The /agent catalogue over real HTTP with a catalog:read token: the same products as the public API with prices and
// stock always included, lookups by handle, text search, collection and category filters, and the database outage.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, registerClient, requestToken } from './support/agent.js';
import { serverUrl } from './support/database.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import { startTestService, type TestService } from './support/service.js';

const PRICES_AND_STOCK = encodeURIComponent('*variants.calculated_price,+variants.inventory_quantity');
const TWO_PACK = 'tongue-scraper-2-pack';
const TRAVEL = 'tongue-scraper-2-pack-travel-cases';

let api: TestService;
let token: string;
beforeAll(async () => {
  api = await startTestService();
  token = await requestToken(api, await registerClient(api, { scope: 'catalog:read' }));
});
afterAll(async () => {
  await api?.close();
});

async function json(
  path: string,
  headers: Record<string, string> = bearer(token),
): Promise<{ status: number; body: any; response: Response }> {
  const response = await api.http(path, { headers });
  return { status: response.status, body: await response.json(), response };
}

const handles = (body: { products: { handle: string }[] }) => body.products.map((product) => product.handle);

describe('GET /agent/products', () => {
  it('equals the public listing with prices and stock selected, not cached', async () => {
    const agent = await json('/agent/products');
    const store = await json(`/api/store/products?fields=${PRICES_AND_STOCK}`, {});
    expect(agent.status).toBe(200);
    expect(agent.body).toEqual(store.body);
    expect(agent.body.products[0].variants[0]).toMatchObject({
      inventory_quantity: 240,
      calculated_price: { calculated_amount: 12.99, currency_code: 'usd' },
    });
    expect(agent.response.headers.get('cache-control')).toBe('no-store');
    expect(agent.response.headers.has('etag')).toBe(false);
  });

  it.each(['reg_eu', 'reg_jp'])('prices in region %s like the public API', async (region) => {
    const agent = await json(`/agent/products?region_id=${region}`);
    const store = await json(`/api/store/products?region_id=${region}&fields=${PRICES_AND_STOCK}`, {});
    expect(agent.body).toEqual(store.body);
  });

  it.each([
    ['travel', [TRAVEL]],
    ['STEEL', [TWO_PACK, TRAVEL]],
    ['travel   steel', [TRAVEL]],
    ['gym bag', [TWO_PACK]],
    ['ventilated', [TRAVEL]],
    ['titanium', []],
    ['%', []],
    ['_', []],
    ['ul', []],
  ])(
    'searches titles and descriptions with q=%j (every word, case-insensitive, text not markup)',
    async (q, expected) => {
      const { status, body } = await json(`/agent/products?q=${encodeURIComponent(q)}`);
      expect(status).toBe(200);
      expect(handles(body)).toEqual(expected);
      expect(body.count).toBe(expected.length);
    },
  );

  it.each([
    ['collection=tongue-care', [TWO_PACK, TRAVEL]],
    ['collection=pcol_01tonguecare', [TWO_PACK, TRAVEL]],
    ['category=travel-sets', [TRAVEL]],
    ['category=pcat_01travel', [TRAVEL]],
    ['category=tongue-scrapers', [TWO_PACK, TRAVEL]],
    ['category=oral-care', [TWO_PACK, TRAVEL]],
    ['category=travel-sets&q=gym', []],
    ['category=oral-care&collection=tongue-care&q=cases', [TRAVEL]],
  ])('filters by %s (id or handle; a category includes its subcategories)', async (query, expected) => {
    const { status, body } = await json(`/agent/products?${query}`);
    expect(status).toBe(200);
    expect(handles(body)).toEqual(expected);
  });

  it('pages filtered results, counting every match', async () => {
    const { body } = await json('/agent/products?category=oral-care&limit=1&offset=1');
    expect(body).toMatchObject({ count: 2, limit: 1, offset: 1 });
    expect(handles(body)).toEqual([TRAVEL]);
  });

  it.each([
    ['collection=nope', 'collection'],
    ['category=nope', 'category'],
    ['region_id=reg_mars', 'reg_mars'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['offset=-1', 'offset'],
    ['q=', 'q'],
    ['q=%20%20', 'q'],
    ['fields=title', 'fields'],
  ])('answers 400 invalid_request to %s', async (query, mentioned) => {
    const { status, body } = await json(`/agent/products?${query}`);
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toContain(mentioned);
  });
});

describe('GET /agent/products/{id_or_handle}', () => {
  it.each([TRAVEL, 'prod_01tonguetravel'])(
    'finds %s and equals the public product with prices and stock',
    async (key) => {
      const agent = await json(`/agent/products/${key}?region_id=reg_gb`);
      const store = await json(
        `/api/store/products/prod_01tonguetravel?region_id=reg_gb&fields=${PRICES_AND_STOCK}`,
        {},
      );
      expect(agent.status).toBe(200);
      expect(agent.body).toEqual(store.body);
      expect(agent.body.product.variants[0]).toMatchObject({
        inventory_quantity: 85,
        calculated_price: { calculated_amount: 16.99, currency_code: 'gbp' },
      });
    },
  );

  it('answers 404 not_found for an unknown id or handle, and 400 for an unknown region', async () => {
    const missing = await json('/agent/products/tongue-scraper-3-pack');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
    expect(missing.body.error_description).toContain('tongue-scraper-3-pack');
    const region = await json(`/agent/products/${TWO_PACK}?region_id=reg_xx`);
    expect([region.status, region.body.error]).toEqual([400, 'invalid_request']);
  });
});

describe('collections, categories, regions and reviews', () => {
  it('lists collections and regions exactly as the public API does', async () => {
    expect((await json('/agent/collections')).body).toEqual((await json('/api/store/collections', {})).body);
    expect((await json('/agent/regions')).body).toEqual((await json('/api/store/regions', {})).body);
  });

  it('lists the category tree, each parent before its children, with parent handles', async () => {
    const { status, body } = await json('/agent/categories');
    expect(status).toBe(200);
    expect(
      body.categories.map((category: { handle: string; parent_handle: string | null }) => [
        category.handle,
        category.parent_handle,
      ]),
    ).toEqual([
      ['oral-care', null],
      ['tongue-scrapers', 'oral-care'],
      ['travel-sets', 'oral-care'],
    ]);
    expect(body.categories[1]).toEqual({
      id: 'pcat_01tonguescrapers',
      name: 'Tongue Scrapers',
      handle: 'tongue-scrapers',
      description: 'Stainless steel scrapers that lift the coating from the tongue.',
      parent_id: 'pcat_01oralcare',
      parent_handle: 'oral-care',
    });
  });

  it('lists reviews like the public API, for the store or one product by id or handle', async () => {
    expect((await json('/agent/reviews')).body).toEqual((await json('/api/store/reviews', {})).body);
    const byId = await json('/api/store/reviews?product_id=prod_01tonguetravel', {});
    expect((await json(`/agent/reviews?product=${TRAVEL}`)).body).toEqual(byId.body);
    expect((await json('/agent/reviews?product=prod_01tonguetravel')).body).toEqual(byId.body);
    const missing = await json('/agent/reviews?product=nope');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
  });

  it.each([
    '/agent/collections?handle=tongue-care',
    '/agent/regions?currency=usd',
    '/agent/reviews?product_id=prod_01tonguetravel',
  ])('answers 400 invalid_request to an unknown parameter: %s', async (path) => {
    const { status, body } = await json(path);
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_request');
  });

  it.each([
    '/agent/products',
    `/agent/products/${TWO_PACK}`,
    '/agent/collections',
    '/agent/categories',
    '/agent/regions',
    '/agent/reviews',
  ])('requires a token on %s', async (path) => {
    const { status, body, response } = await json(path, {});
    expect(status).toBe(401);
    expect(body.error).toBe('unauthorized');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="/);
  });
});

describe.skipIf(!serverUrl)('the agent surface with PostgreSQL unreachable', () => {
  let outage: ServiceBehindProxy;
  let outageToken: string;

  beforeAll(async () => {
    outage = await startServiceBehindProxy();
    outageToken = await requestToken(outage.api, await registerClient(outage.api));
  });
  afterAll(async () => {
    await outage?.close();
  });

  it('answers 503 temporarily_unavailable with Retry-After on every database-backed endpoint, then recovers', async () => {
    await outage.proxy.cut();
    const requests: [string, RequestInit][] = [
      ['/agent/products', { headers: bearer(outageToken) }],
      ['/oauth/register', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' }],
      [
        '/oauth/token',
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'Basic YTpi' },
          body: 'grant_type=client_credentials',
        },
      ],
      [
        '/oauth/revoke',
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: 'Basic YTpi' },
          body: 'token=x',
        },
      ],
    ];
    for (const [path, init] of requests) {
      const response = await outage.api.http(path, init);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(((await response.json()) as { error: string }).error).toBe('temporarily_unavailable');
    }
    const metadata = await outage.api.http('/.well-known/oauth-authorization-server');
    expect(metadata.status).toBe(200);

    await outage.proxy.restore();
    await expect
      .poll(async () => (await outage.api.http('/agent/products', { headers: bearer(outageToken) })).status, {
        timeout: 10_000,
      })
      .toBe(200);
  });
});
