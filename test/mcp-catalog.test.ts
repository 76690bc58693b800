// The catalog MCP server driven by the SDK client over real HTTP: every tool, compared with the REST API's answer to
// the same question, and every kind of bad input as an isError result.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectMcp, contractShape, schemaShape } from './support/mcp.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let client: Client;
beforeAll(async () => {
  api = await startTestService();
  client = await connectMcp(api, '/catalog/mcp');
});
afterAll(async () => {
  await client?.close();
  await api?.close();
});

const PRICES_AND_STOCK = encodeURIComponent('*variants.calculated_price,+variants.inventory_quantity');

async function rest(path: string): Promise<any> {
  const response = await api.http(path);
  expect(response.status).toBe(200);
  return response.json();
}

/** Calls a tool that must succeed; its text block must be the same JSON as its structured content. */
async function success(name: string, args: Record<string, unknown> = {}): Promise<any> {
  const outcome = await callTool(client, name, args);
  expect(outcome.isError, outcome.texts.join('\n')).toBe(false);
  expect(JSON.parse(outcome.texts[0]!)).toEqual(outcome.structured);
  return outcome.structured;
}

/** Calls a tool that must fail as a tool result: no structured content, a message naming the argument. */
async function failure(name: string, args: Record<string, unknown>, argument: string): Promise<string> {
  const outcome = await callTool(client, name, args);
  expect(outcome.isError).toBe(true);
  expect(outcome.structured).toBeUndefined();
  expect(outcome.texts.join('\n')).toContain(argument);
  return outcome.texts.join('\n');
}

describe('tools/list', () => {
  it('lists the six read-only tools, each with a title, description, input and output schema', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'search_products',
      'get_product',
      'list_reviews',
      'list_regions',
      'list_collections',
      'get_store_policies',
    ]);
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    }
  });

  it.each([
    ['search_products', 'ProductList'],
    ['get_product', 'ProductEnvelope'],
    ['list_reviews', 'ReviewList'],
    ['list_regions', 'RegionList'],
    ['list_collections', 'CollectionList'],
  ])('advertises %s with the output schema of the REST %s', async (name, component) => {
    const { tools } = await client.listTools();
    const tool = tools.find((candidate) => candidate.name === name)!;
    expect(schemaShape(tool.outputSchema!)).toEqual(contractShape(component));
  });
});

describe('search_products', () => {
  it('lists the catalogue with prices and stock exactly as GET /api/store/products does', async () => {
    expect(await success('search_products')).toEqual(await rest(`/api/store/products?fields=${PRICES_AND_STOCK}`));
  });

  it('prices in the region asked for, and pages like REST', async () => {
    const page = await success('search_products', { region_id: 'reg_jp', limit: 1, offset: 1 });
    expect(page).toEqual(
      await rest(`/api/store/products?fields=${PRICES_AND_STOCK}&region_id=reg_jp&limit=1&offset=1`),
    );
    expect(page.products[0].variants[0].calculated_price).toMatchObject({
      calculated_amount: 2900,
      currency_code: 'jpy',
    });
    expect(page.count).toBe(2);
  });

  it.each([
    ['travel', ['tongue-scraper-2-pack-travel-cases']],
    ['TRAVEL cases', ['tongue-scraper-2-pack-travel-cases']],
    ['ventilated', ['tongue-scraper-2-pack-travel-cases']],
    ['steel', ['tongue-scraper-2-pack', 'tongue-scraper-2-pack-travel-cases']],
    ['guest bathroom', ['tongue-scraper-2-pack']],
    ['<li>', []], // the product copy's HTML tags are not its text
    ['50%', []], // LIKE wildcards match literally
    ['_', []],
    ['steel nonexistentword', []],
  ])('finds products by the free text %j', async (query, handles) => {
    const page = await success('search_products', { query });
    expect(page.products.map((product: any) => product.handle)).toEqual(handles);
    expect(page.count).toBe(handles.length);
  });

  it('filters by collection handle or id, and equals the REST listing for the same products', async () => {
    const byHandle = await success('search_products', { collection: 'tongue-care', query: 'travel' });
    const byId = await success('search_products', { collection: 'pcol_01tonguecare', query: 'travel' });
    expect(byId).toEqual(byHandle);
    const [travel] = (
      await rest(`/api/store/products?fields=${PRICES_AND_STOCK}&handle=tongue-scraper-2-pack-travel-cases`)
    ).products;
    expect(byHandle.products).toEqual([travel]);
  });

  it.each([
    [{ collection: 'no-such-collection' }, 'collection'],
    [{ region_id: 'reg_mars' }, 'region_id'],
    [{ limit: 0 }, 'limit'],
    [{ limit: 101 }, 'limit'],
    [{ offset: -1 }, 'offset'],
    [{ query: '' }, 'query'],
    [{ colour: 'red' }, 'colour'],
  ])('answers %j with an isError result naming %s', async (args, argument) => {
    await failure('search_products', args, argument);
  });
});

describe('get_product', () => {
  it('returns one product by handle or by id, as GET /api/store/products/{id} with prices and stock', async () => {
    const expected = await rest(`/api/store/products/prod_01tonguetravel?fields=${PRICES_AND_STOCK}&region_id=reg_gb`);
    expect(await success('get_product', { product: 'prod_01tonguetravel', region_id: 'reg_gb' })).toEqual(expected);
    expect(
      await success('get_product', { product: 'tongue-scraper-2-pack-travel-cases', region_id: 'reg_gb' }),
    ).toEqual(expected);
    expect(expected.product.variants[0]).toMatchObject({
      inventory_quantity: 85,
      calculated_price: { calculated_amount: 16.99, currency_code: 'gbp' },
    });
  });

  it.each([
    [{ product: 'prod_nope' }, 'product'],
    [{ product: 'no-such-product' }, 'product'],
    [{}, 'product'],
    [{ product: 'prod_01tonguetravel', region_id: 'reg_zz' }, 'region_id'],
    [{ product: 'prod_01tonguetravel', region: 'reg_eu' }, 'region'],
  ])('answers %j with an isError result naming %s', async (args, argument) => {
    await failure('get_product', args, argument);
  });
});

describe('reviews, regions and collections', () => {
  it('lists reviews with avg_rating as GET /api/store/reviews, for the store and for one product', async () => {
    expect(await success('list_reviews')).toEqual(await rest('/api/store/reviews'));
    const travel = await success('list_reviews', { product: 'prod_01tonguetravel' });
    expect(travel).toEqual(await rest('/api/store/reviews?product_id=prod_01tonguetravel'));
    expect(travel).toMatchObject({ count: 4, avg_rating: 4.25 });
    expect(await success('list_reviews', { product: 'tongue-scraper-2-pack-travel-cases' })).toEqual(travel);
  });

  it('answers reviews of an unknown product with an isError result naming product', async () => {
    await failure('list_reviews', { product: 'prod_unknown' }, 'product');
  });

  it('lists regions and collections as their REST endpoints', async () => {
    expect(await success('list_regions')).toEqual(await rest('/api/store/regions'));
    expect(await success('list_collections')).toEqual(await rest('/api/store/collections'));
    expect(await success('list_collections', { handle: 'tongue-care' })).toEqual(
      await rest('/api/store/collections?handle=tongue-care'),
    );
  });

  it('rejects a wrongly typed argument as an isError result', async () => {
    await failure('list_reviews', { product: 42 }, 'product');
  });
});

describe('get_store_policies', () => {
  it('gives shipping and tax per region, with every region REST lists', async () => {
    const { regions } = await success('get_store_policies');
    const listed = (await rest('/api/store/regions')).regions;
    expect(
      regions.map((region: any) => [region.region_id, region.name, region.currency_code, region.countries]),
    ).toEqual(listed.map((region: any) => [region.id, region.name, region.currency_code, region.countries]));
  });

  it('states the rates of one region in major units, with the returns policy', async () => {
    const policies = await success('get_store_policies', { region_id: 'reg_us' });
    expect(policies.regions).toHaveLength(1);
    expect(policies.regions[0]).toMatchObject({
      region_id: 'reg_us',
      shipping: {
        flat_rate: { amount: 4.95, currency: 'usd' },
        free_shipping_threshold: { amount: 25, currency: 'usd' },
      },
      tax: { rate_percent: 7.25, prices_include_tax: false },
    });
    expect(policies.regions[0].shipping.summary).toContain('25.00 USD');
    expect(policies.returns.window_days).toBe(30);
    expect(policies.returns.policy).toMatch(/return/i);
    expect((await success('get_store_policies', { region_id: 'reg_jp' })).regions[0].shipping.flat_rate).toEqual({
      amount: 600,
      currency: 'jpy',
    });
  });

  it('answers an unknown region with an isError result naming region_id', async () => {
    await failure('get_store_policies', { region_id: 'reg_mars' }, 'region_id');
  });
});

describe('the read cache', () => {
  const TRAVEL = 'variant_01tonguetravel';
  const variant = () => api.service.deps.db('variants').where({ id: TRAVEL });
  const usPrice = () => api.service.deps.db('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_us' });
  const travelVariant = async () => (await success('search_products', { query: 'travel' })).products[0].variants[0];

  it('answers search_products from the read cache until it is cleared, while a checkout session is re-priced at once', async () => {
    const checkout = await connectMcp(api, '/checkout/mcp');
    const { inventory_quantity: stock } = await travelVariant();
    const [{ amount: price }] = await usPrice().select('amount');
    const created = await callTool(checkout, 'create_checkout_session', { items: [{ id: TRAVEL, quantity: 1 }] });
    const getSession = async () => await callTool(checkout, 'get_checkout_session', { id: created.structured.id });
    expect((await getSession()).structured.totals.subtotal.amount).toBe(price / 100);
    await variant().update({ inventory_quantity: stock - 7 });
    await usPrice().update({ amount: price + 100 });
    try {
      expect(await travelVariant()).toMatchObject({ inventory_quantity: stock }); // up to 60 s old
      expect((await getSession()).structured.totals.subtotal.amount).toBe((price + 100) / 100);
      api.service.deps.readCache.clear();
      expect(await travelVariant()).toMatchObject({
        inventory_quantity: stock - 7,
        calculated_price: { calculated_amount: (price + 100) / 100 },
      });
    } finally {
      await variant().update({ inventory_quantity: stock });
      await usPrice().update({ amount: price });
      api.service.deps.readCache.clear();
      await checkout.close();
    }
  });

  it('never keeps a failure: a product that was missing is found as soon as it exists', async () => {
    const handle = 'tongue-scraper-2-pack-travel-cases';
    const product = () => api.service.deps.db('products').where({ id: 'prod_01tonguetravel' });
    await product().update({ handle: `${handle}-renamed` });
    try {
      await failure('get_product', { product: handle }, 'product');
    } finally {
      await product().update({ handle });
    }
    expect((await success('get_product', { product: handle })).product.id).toBe('prod_01tonguetravel');
  });

  it('says in the description of each cached tool that its results may be up to 60 s old', async () => {
    const { tools } = await client.listTools();
    const cached = tools.filter((tool) => tool.description!.endsWith('Results may be up to 60 s old.'));
    expect(cached.map((tool) => tool.name)).toEqual([
      'search_products',
      'get_product',
      'list_reviews',
      'list_regions',
      'list_collections',
    ]);
  });
});

describe('unknown tools', () => {
  it('answers a tool that does not exist with an isError result', async () => {
    const outcome = await callTool(client, 'complete_checkout', {});
    expect(outcome.isError).toBe(true);
    expect(outcome.texts[0]).toContain('complete_checkout');
  });
});
