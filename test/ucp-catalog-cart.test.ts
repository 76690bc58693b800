// UCP catalog (search, lookup, product) and cart (create, get, update, cancel, conversion into a checkout) over the
// real service and database, in 2026-08-25 and 2026-04-08, on REST (every body validated by protocolFetch against the
// contract and that version's UCP schemas) and on /ucp/mcp (structuredContent validated the same way): the catalogue
// of the REST API in integer minor units, the agent carts' model, negotiation per capability, and hostile input.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capabilityEntry, platformProfile, serveProfiles, type ProfileServer } from '../src/conformance/profile.js';
import { MCP_TOOLS } from '../src/conformance/checks/ucp-mcp.js';
import { startTestService, type TestService } from './support/service.js';
import { cartCount, PROTOCOL_ENV, protocolBodyProblems, protocolFetch, ucpHeaders } from './support/protocols.js';

const VERSIONS = ['2026-08-25', '2026-04-08'] as const;
const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const CATALOG = ['dev.ucp.shopping.catalog.search', 'dev.ucp.shopping.catalog.lookup', 'dev.ucp.shopping.cart'];

/** A platform profile of `version` declaring `names` (each at that version). */
function profileOf(version: string, names: string[]) {
  return platformProfile({
    version,
    capabilities: Object.fromEntries(
      names.map((name) => [
        name,
        [
          capabilityEntry(
            name,
            version,
            name === 'dev.ucp.shopping.discount'
              ? { extends: ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.cart'] }
              : {},
          ),
        ],
      ]),
    ),
  });
}

let api: TestService;
let profiles: ProfileServer;
const url = (path: string) => `${profiles.base}${path}`;
beforeAll(async () => {
  const everything = ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.discount', ...CATALOG];
  profiles = await serveProfiles(
    Object.fromEntries(
      VERSIONS.flatMap((version) => [
        [`/${version}.json`, profileOf(version, everything)],
        [`/${version}-checkout-only.json`, profileOf(version, ['dev.ucp.shopping.checkout'])],
        [`/${version}-no-discount.json`, profileOf(version, ['dev.ucp.shopping.checkout', ...CATALOG])],
      ]),
    ),
  );
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
});

function send(method: string, path: string, profile: string, body?: unknown, headers: Record<string, string> = {}) {
  return protocolFetch(api, path, {
    method,
    headers: { ...ucpHeaders(url(profile)), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

/** A tools/call on /ucp/mcp; a result's structuredContent is validated as the REST body of `restPath`. */
async function mcpCall(name: string, args: unknown, restPath: string) {
  const response = await api.http('/ucp/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await response.json()) as any;
  if (body.result) {
    expect(protocolBodyProblems(restPath, 200, body.result.structuredContent)).toEqual([]);
    expect(JSON.parse(body.result.content[0].text)).toEqual(body.result.structuredContent);
  }
  return { status: response.status, body, result: body.result?.structuredContent };
}

describe('discovery', () => {
  it('advertises catalog search, lookup and cart in both versions', async () => {
    const latest = await protocolFetch(api, '/.well-known/ucp');
    const older = await protocolFetch(api, '/ucp/profiles/2026-04-08');
    for (const { body } of [latest, older])
      for (const name of CATALOG)
        expect(body.ucp.capabilities[name], name).toEqual([
          expect.objectContaining({ version: body.ucp.version, schema: expect.stringContaining('/schemas/shopping/') }),
        ]);
  });

  it('lists the catalog and cart tools of mcp.openrpc.json on /ucp/mcp, each with its result schema', async () => {
    const list = await api.http('/ucp/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const tools = ((await list.json()) as any).result.tools as any[];
    const wanted = CATALOG.flatMap((name) => MCP_TOOLS[name] ?? []);
    expect(wanted).toHaveLength(7);
    for (const name of wanted) {
      const tool = tools.find((candidate) => candidate.name === name);
      expect(tool, name).toBeDefined();
      expect(tool.outputSchema.$defs, name).toBeDefined();
      expect(tool.annotations.readOnlyHint, name).toBe(
        ['search_catalog', 'lookup_catalog', 'get_product', 'get_cart'].includes(name),
      );
    }
  });
});

describe.each(VERSIONS)('UCP %s catalog', (version) => {
  const profile = `/${version}.json`;

  it('search: words, categories, price (minor units), market and pages', async () => {
    const all = await send('POST', '/ucp/catalog/search', profile, {}, { 'Idempotency-Key': '' });
    expect(all.response.status).toBe(200);
    expect(all.body.ucp).toEqual({
      version,
      status: 'success',
      capabilities: { 'dev.ucp.shopping.catalog.search': [{ version }] },
    });
    expect(all.body.products.map((product: any) => product.variants[0].id)).toEqual([TWO_PACK, TRAVEL]);
    expect(all.body.products[0].price_range.min).toEqual({ amount: 1299, currency: 'USD' });
    expect(all.body.pagination).toEqual({ has_next_page: false, total_count: 2 });

    const travel = await send('POST', '/ucp/catalog/search', profile, { query: 'travel cases' });
    expect(travel.body.products.map((product: any) => product.id)).toEqual([all.body.products[1].id]);
    const category = await send('POST', '/ucp/catalog/search', profile, { filters: { categories: ['travel-sets'] } });
    expect(category.body.products.map((product: any) => product.id)).toEqual([all.body.products[1].id]);
    const cheap = await send('POST', '/ucp/catalog/search', profile, { filters: { price: { max: 1500 } } });
    expect(cheap.body.products.map((product: any) => product.variants[0].price.amount)).toEqual([1299]);

    const german = await send('POST', '/ucp/catalog/search', profile, { context: { address_country: 'DE' } });
    expect(german.body.products[0].variants[0].price).toEqual({ amount: 1199, currency: 'EUR' });
    const japanese = await send('POST', '/ucp/catalog/search', profile, { context: { address_country: 'jp' } });
    expect(japanese.body.products[1].variants[0].price).toEqual({ amount: 2900, currency: 'JPY' });

    const first = await send('POST', '/ucp/catalog/search', profile, { pagination: { limit: 1 } });
    expect(first.body.products).toHaveLength(1);
    expect(first.body.pagination).toMatchObject({ has_next_page: true, total_count: 2 });
    const second = await send('POST', '/ucp/catalog/search', profile, {
      pagination: { limit: 1, cursor: first.body.pagination.cursor },
    });
    expect(second.body.products[0].id).toBe(all.body.products[1].id);
    expect(second.body.pagination.has_next_page).toBe(false);
  });

  it('lookup: product ids and handles, variant ids and SKUs, each variant with its inputs; unknown ids warned', async () => {
    const { response, body } = await send('POST', '/ucp/catalog/lookup', profile, {
      ids: ['TS-316L-2PK', 'tongue-scraper-2-pack-travel-cases', 'nope', TWO_PACK],
    });
    expect(response.status).toBe(200);
    expect(
      body.products.map((product: any) => product.variants.map((variant: any) => [variant.id, variant.inputs])),
    ).toEqual([
      [
        [
          TWO_PACK,
          [
            { id: 'TS-316L-2PK', match: 'exact' },
            { id: TWO_PACK, match: 'exact' },
          ],
        ],
      ],
      [[TRAVEL, [{ id: 'tongue-scraper-2-pack-travel-cases', match: 'featured' }]]],
    ]);
    expect(body.messages).toEqual([expect.objectContaining({ type: 'warning', code: 'not_found', path: '$.ids[2]' })]);
  });

  it('get_product: by handle or variant, with its option and selection; unknown is not_found', async () => {
    const byHandle = await send('POST', '/ucp/catalog/product', profile, { id: 'tongue-scraper-2-pack' });
    expect(byHandle.response.status).toBe(200);
    expect(byHandle.body.product).toMatchObject({
      handle: 'tongue-scraper-2-pack',
      selected: [{ name: 'Variant', label: '2-Pack' }],
      options: [{ name: 'Variant', values: [{ label: '2-Pack', available: true, exists: true }] }],
      variants: [{ id: TWO_PACK, price: { amount: 1299, currency: 'USD' }, availability: { available: true } }],
    });
    const unknown = await send('POST', '/ucp/catalog/product', profile, { id: 'prod_nope' });
    expect([unknown.response.status, unknown.body.ucp.status, unknown.body.messages[0].code]).toEqual([
      200,
      'error',
      'not_found',
    ]);
  });

  it('lookup: filters narrow products (categories) and variants (price); others are a recoverable error', async () => {
    const ids = [TWO_PACK, TRAVEL];
    const variantsOf = (body: any) =>
      body.products.flatMap((product: any) => product.variants.map((variant: any) => variant.id));
    const travel = await send('POST', '/ucp/catalog/lookup', profile, {
      ids,
      filters: { categories: ['travel-sets'] },
    });
    expect(variantsOf(travel.body)).toEqual([TRAVEL]);
    expect(travel.body.messages).toEqual([
      expect.objectContaining({ type: 'info', code: 'filtered_out', path: '$.ids[0]' }),
    ]);
    const cheap = await send('POST', '/ucp/catalog/lookup', profile, { ids, filters: { price: { max: 1500 } } });
    expect(variantsOf(cheap.body)).toEqual([TWO_PACK]);
    expect(cheap.body.messages).toEqual([expect.objectContaining({ code: 'filtered_out', path: '$.ids[1]' })]);
    const both = await send('POST', '/ucp/catalog/lookup', profile, {
      ids,
      filters: { categories: ['travel-sets'], price: { max: 1500 } },
    });
    expect([both.body.products, both.body.messages.map((message: any) => message.path)]).toEqual([
      [],
      ['$.ids[0]', '$.ids[1]'],
    ]);
    // A price in another currency than the market's is not applied, and said so.
    const euros = await send('POST', '/ucp/catalog/lookup', profile, {
      ids,
      context: { currency: 'EUR' },
      filters: { price: { max: 1500 } },
    });
    expect(variantsOf(euros.body)).toEqual([TWO_PACK, TRAVEL]);
    expect(euros.body.messages).toEqual([
      expect.objectContaining({ type: 'warning', code: 'filter_ignored', path: '$.filters.price' }),
    ]);
    const unsupported = await send('POST', '/ucp/catalog/lookup', profile, {
      ids,
      filters: { methods: ['pickup'], fulfills_to: { address_country: 'US' }, 'made-in': 'DE' },
    });
    expect(variantsOf(unsupported.body)).toEqual([TWO_PACK, TRAVEL]);
    expect(unsupported.body.messages).toEqual(
      ['$.filters.methods', '$.filters.fulfills_to', '$.filters["made-in"]'].map((path) =>
        expect.objectContaining({ type: 'error', code: 'filter_unsupported', severity: 'recoverable', path }),
      ),
    );
    const search = await send('POST', '/ucp/catalog/search', profile, { filters: { methods: ['pickup'] } });
    expect([search.body.products.length, search.body.messages[0].path]).toEqual([2, '$.filters.methods']);
  });

  it('get_product: selection by value id or label, relaxed when it matches nothing; filters narrow variants', async () => {
    const handle = 'tongue-scraper-2-pack';
    const byId = await send('POST', '/ucp/catalog/product', profile, {
      id: handle,
      selected: [{ name: 'Variant', id: TWO_PACK, label: 'whatever the label' }],
      preferences: ['Variant'],
    });
    expect(byId.body.product.selected).toEqual([{ name: 'Variant', id: TWO_PACK, label: '2-Pack' }]);
    expect(byId.body.product.options[0].values[0]).toMatchObject({ id: TWO_PACK, label: '2-Pack' });
    expect(byId.body.messages).toBeUndefined();
    const relaxed = await send('POST', '/ucp/catalog/product', profile, {
      id: handle,
      selected: [
        { name: 'Variant', label: '12-Pack' },
        { name: 'Color', label: 'Red' },
      ],
    });
    expect(relaxed.body.product.variants[0].id).toBe(TWO_PACK);
    expect(relaxed.body.messages).toEqual(
      ['$.selected[0]', '$.selected[1]'].map((path) =>
        expect.objectContaining({ type: 'warning', code: 'selection_relaxed', path }),
      ),
    );
    for (const filters of [{ price: { min: 5000 } }, { categories: ['travel-sets'] }]) {
      const none = await send('POST', '/ucp/catalog/product', profile, { id: handle, filters });
      expect([none.body.ucp.status, none.body.messages[0]], JSON.stringify(filters)).toEqual([
        'error',
        expect.objectContaining({ code: 'filtered_out', severity: 'recoverable', path: '$.filters' }),
      ]);
    }
    const kept = await send('POST', '/ucp/catalog/product', profile, {
      id: handle,
      filters: { price: { max: 1500 }, methods: ['shipping'] },
    });
    expect(kept.body.product.variants.map((variant: any) => variant.id)).toEqual([TWO_PACK]);
    expect(kept.body.messages).toEqual([
      expect.objectContaining({ code: 'filter_unsupported', severity: 'recoverable', path: '$.filters.methods' }),
    ]);
  });

  it('the same answers over /ucp/mcp', async () => {
    const meta = { 'ucp-agent': { profile: url(profile) } };
    const rest = await send('POST', '/ucp/catalog/search', profile, { query: 'scraper' });
    const search = await mcpCall('search_catalog', { meta, catalog: { query: 'scraper' } }, '/ucp/catalog/search');
    expect(search.result).toEqual(rest.body);
    const lookup = await mcpCall('lookup_catalog', { meta, catalog: { ids: [TRAVEL] } }, '/ucp/catalog/lookup');
    expect(lookup.result.products[0].variants[0].inputs).toEqual([{ id: TRAVEL, match: 'exact' }]);
    const filtered = { ids: [TWO_PACK, TRAVEL], filters: { categories: ['travel-sets'], methods: ['pickup'] } };
    const filteredRest = await send('POST', '/ucp/catalog/lookup', profile, filtered);
    const filteredMcp = await mcpCall('lookup_catalog', { meta, catalog: filtered }, '/ucp/catalog/lookup');
    expect(filteredMcp.result).toEqual(filteredRest.body);
    expect(filteredMcp.result.products).toHaveLength(1);
    const narrowed = { id: 'tongue-scraper-2-pack', filters: { price: { min: 5000 } } };
    const narrowedMcp = await mcpCall('get_product', { meta, catalog: narrowed }, '/ucp/catalog/product');
    expect(narrowedMcp.result.messages[0].code).toBe('filtered_out');
    const product = await mcpCall('get_product', { meta, catalog: { id: TRAVEL } }, '/ucp/catalog/product');
    expect(product.result.product.variants[0].id).toBe(TRAVEL);
    expect(product.result.ucp.version).toBe(version);
  });
});

describe.each(VERSIONS)('UCP %s cart', (version) => {
  const profile = `/${version}.json`;

  it('create, get, update, then converted into a checkout with the same id', async () => {
    const created = await send('POST', '/ucp/carts', profile, {
      line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
      buyer: { email: 'ada@example.com' },
      context: { address_country: 'DE' },
    });
    expect(created.response.status).toBe(201);
    expect(created.body).toMatchObject({
      ucp: { version, capabilities: { 'dev.ucp.shopping.cart': [{ version }] } },
      currency: 'EUR',
      buyer: { email: 'ada@example.com' },
      line_items: [{ item: { id: TWO_PACK, price: 1199 }, quantity: 2 }],
    });
    expect(created.body.totals.find((total: any) => total.type === 'subtotal').amount).toBe(2398);
    const path = `/ucp/carts/${created.body.id}`;
    const got = await send('GET', path, profile);
    expect(got.body.totals).toEqual(created.body.totals);
    // The cart is no checkout before it is converted.
    const early = await send('GET', `/ucp/checkout-sessions/${created.body.id}`, profile);
    expect(early.body.messages[0].code).toBe('not_found');

    const updated = await send('PUT', path, profile, {
      line_items: [
        { id: created.body.line_items[0].id, item: { id: TWO_PACK }, quantity: 3 },
        { item: { id: TRAVEL }, quantity: 1 },
      ],
    });
    expect(updated.response.status).toBe(200);
    expect(updated.body.line_items.map((line: any) => [line.id, line.quantity])).toEqual([
      [created.body.line_items[0].id, 3],
      [expect.stringMatching(/^cali_/), 1],
    ]);
    expect(updated.body.buyer).toBeUndefined(); // full replacement: an absent buyer is cleared

    const checkout = await send('POST', '/ucp/checkout-sessions', profile, {
      cart_id: created.body.id,
      line_items: [{ item: { id: TRAVEL }, quantity: 9 }], // overlapping: the cart's lines are used
      discounts: { codes: ['10OFF'] },
    });
    expect(checkout.response.status).toBe(201);
    expect(checkout.body).toMatchObject({ id: created.body.id, status: 'requires_escalation', currency: 'EUR' });
    expect(checkout.body.line_items.map((line: any) => [line.item.id, line.quantity])).toEqual([
      [TWO_PACK, 3],
      [TRAVEL, 1],
    ]);
    expect(checkout.body.discounts.applied[0].code).toBe('10OFF');
    const gone = await send('GET', path, profile);
    expect([gone.body.ucp.status, gone.body.messages[0].code]).toEqual(['error', 'not_found']);
    const again = await send('POST', '/ucp/checkout-sessions', profile, { cart_id: created.body.id });
    expect(again.body.messages[0]).toMatchObject({ code: 'not_found', path: '$.cart_id' });
  });

  it('discount codes on the cart: applied, totalled and refused exactly as the checkout does, kept at conversion', async () => {
    const line_items = [{ item: { id: TWO_PACK }, quantity: 2 }];
    const discounts = { codes: ['10OFF'] };
    const cart = await send('POST', '/ucp/carts', profile, { line_items, discounts });
    const checkout = await send('POST', '/ucp/checkout-sessions', profile, { line_items, discounts });
    expect(cart.response.status).toBe(201);
    expect(cart.body.ucp.capabilities['dev.ucp.shopping.discount']).toEqual([{ version }]);
    expect(cart.body.discounts).toEqual(checkout.body.discounts);
    expect(cart.body.discounts.applied[0]).toMatchObject({ code: '10OFF', amount: expect.any(Number) });
    expect(cart.body.totals).toEqual(checkout.body.totals);
    expect(cart.body.line_items[0].totals).toEqual(checkout.body.line_items[0].totals);

    // A code the promotions refuse: the same warning, at the same path, as the checkout's.
    const codes = { codes: ['10OFF', 'NOPE-NOT-A-CODE'] };
    const cartPath = `/ucp/carts/${cart.body.id}`;
    const refused = await send('PUT', cartPath, profile, { line_items, discounts: codes });
    const checkoutRefused = await send('PUT', `/ucp/checkout-sessions/${checkout.body.id}`, profile, {
      line_items,
      discounts: codes,
    });
    const warningAt = (body: any) => body.messages.find((message: any) => message.path === '$.discounts.codes[1]');
    expect(warningAt(refused.body)).toEqual(warningAt(checkoutRefused.body));
    expect(warningAt(refused.body)).toMatchObject({ type: 'warning', code: 'discount_code_invalid' });
    expect(refused.body.discounts).toEqual(checkoutRefused.body.discounts);
    expect(refused.body.totals).toEqual(checkoutRefused.body.totals);

    // Full replacement: without discounts the codes are cleared.
    const cleared = await send('PUT', cartPath, profile, { line_items });
    expect(cleared.body.discounts).toEqual({ codes: [], applied: [] });
    expect(cleared.body.totals.some((total: any) => total.type === 'items_discount')).toBe(false);

    // The cart's codes carry over into its checkout when the conversion sends none.
    await send('PUT', cartPath, profile, { line_items, discounts });
    const converted = await send('POST', '/ucp/checkout-sessions', profile, { cart_id: cart.body.id });
    expect(converted.body.discounts.applied[0].code).toBe('10OFF');
    expect(converted.body.totals).toEqual(cart.body.totals);
  });

  it('without discount negotiated, a cart takes no codes and says so', async () => {
    const noDiscount = `/${version}-no-discount.json`;
    const line_items = [{ item: { id: TWO_PACK }, quantity: 2 }];
    const cart = await send('POST', '/ucp/carts', noDiscount, { line_items, discounts: { codes: ['10OFF'] } });
    expect(cart.response.status).toBe(201);
    expect(cart.body.ucp.capabilities).toEqual({ 'dev.ucp.shopping.cart': [{ version }] });
    expect(cart.body.discounts).toBeUndefined();
    expect(cart.body.totals.some((total: any) => total.type === 'items_discount')).toBe(false);
    expect(cart.body.messages).toEqual([
      expect.objectContaining({ type: 'warning', code: 'discount_not_negotiated', path: '$.discounts' }),
    ]);
  });

  it('cancel deletes the cart; the same key replays, a new one finds nothing', async () => {
    const created = await send('POST', '/ucp/carts', profile, { line_items: [{ item: { id: TRAVEL }, quantity: 1 }] });
    const path = `/ucp/carts/${created.body.id}/cancel`;
    const key = { 'Idempotency-Key': randomUUID() };
    const canceled = await send('POST', path, profile, undefined, key);
    expect([canceled.response.status, canceled.body.id]).toEqual([200, created.body.id]);
    const replayed = await send('POST', path, profile, undefined, key);
    expect(replayed.text).toBe(canceled.text);
    expect(replayed.response.headers.get('idempotent-replayed')).toBe('true');
    const fresh = await send('POST', path, profile);
    expect(fresh.body.messages[0].code).toBe('not_found');
    const read = await send('GET', `/ucp/carts/${created.body.id}`, profile);
    expect(read.body.messages[0].code).toBe('not_found');
  });

  it('the same cart over /ucp/mcp: create, get, update, cancel', async () => {
    const meta = (key = true) => ({
      'ucp-agent': { profile: url(profile) },
      ...(key ? { 'idempotency-key': randomUUID() } : {}),
    });
    const created = await mcpCall(
      'create_cart',
      { meta: meta(), cart: { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] } },
      '/ucp/carts',
    );
    expect(created.result.ucp.version).toBe(version);
    const { id } = created.result;
    const rest = await send('GET', `/ucp/carts/${id}`, profile);
    const got = await mcpCall('get_cart', { meta: meta(false), id }, '/ucp/carts/x');
    expect(got.result).toEqual(rest.body);
    const updated = await mcpCall(
      'update_cart',
      { meta: meta(), id, cart: { line_items: [{ item: { id: TWO_PACK }, quantity: 4 }] } },
      '/ucp/carts/x',
    );
    expect(updated.result.line_items[0].quantity).toBe(4);
    const discounted = await mcpCall(
      'update_cart',
      {
        meta: meta(),
        id,
        cart: { line_items: [{ item: { id: TWO_PACK }, quantity: 4 }], discounts: { codes: ['10OFF'] } },
      },
      '/ucp/carts/x',
    );
    expect(discounted.result.discounts.applied[0].code).toBe('10OFF');
    expect(discounted.result).toEqual((await send('GET', `/ucp/carts/${id}`, profile)).body);
    const noKey = await mcpCall('cancel_cart', { meta: meta(false), id }, '/ucp/carts/x');
    expect([noKey.status, noKey.body.error.code]).toEqual([400, -32602]);
    const canceled = await mcpCall('cancel_cart', { meta: meta(), id }, '/ucp/carts/x');
    expect(canceled.result.id).toBe(id);
    expect((await mcpCall('get_cart', { meta: meta(false), id }, '/ucp/carts/x')).result.messages[0].code).toBe(
      'not_found',
    );
  });
});

describe.each(VERSIONS)('UCP %s negotiation', (version) => {
  const checkoutOnly = `/${version}-checkout-only.json`;

  it('refuses catalog and cart to a platform that does not declare them, storing nothing', async () => {
    const before = await cartCount(api);
    const search = await send('POST', '/ucp/catalog/search', checkoutOnly, {});
    expect(search.body).toMatchObject({ ucp: { version, status: 'error' }, products: [] });
    expect(search.body.messages[0]).toMatchObject({ code: 'capabilities_incompatible', severity: 'unrecoverable' });
    const lookup = await send('POST', '/ucp/catalog/lookup', checkoutOnly, { ids: [TWO_PACK] });
    expect([lookup.body.products, lookup.body.messages[0].code]).toEqual([[], 'capabilities_incompatible']);
    const product = await send('POST', '/ucp/catalog/product', checkoutOnly, { id: TWO_PACK });
    expect(product.body.messages[0].code).toBe('capabilities_incompatible');
    const cart = await send('POST', '/ucp/carts', checkoutOnly, {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
    });
    expect([cart.response.status, cart.body.ucp.status, cart.body.messages[0].code]).toEqual([
      200,
      'error',
      'capabilities_incompatible',
    ]);
    const mcp = await mcpCall(
      'search_catalog',
      { meta: { 'ucp-agent': { profile: url(checkoutOnly) } }, catalog: {} },
      '/ucp/catalog/search',
    );
    expect(mcp.result.messages[0].code).toBe('capabilities_incompatible');
    expect(await cartCount(api)).toBe(before);
  });

  it('without the cart capability, cart_id converts nothing: the body is a plain create', async () => {
    const cart = await send('POST', '/ucp/carts', `/${version}.json`, {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
    });
    const plain = await send('POST', '/ucp/checkout-sessions', checkoutOnly, { cart_id: cart.body.id });
    expect([plain.response.status, plain.body.code, plain.body.path]).toEqual([400, 'invalid_request', '$.line_items']);
    expect((await send('GET', `/ucp/carts/${cart.body.id}`, `/${version}.json`)).body.id).toBe(cart.body.id);
  });
});

describe('hostile input', () => {
  const profile = '/2026-08-25.json';
  const refused = async (path: string, body: unknown, at: string) => {
    const answer = await send('POST', path, profile, body);
    expect([answer.response.status, answer.body.code, answer.body.path], JSON.stringify(body)).toEqual([
      400,
      'invalid_request',
      at,
    ]);
  };

  it('answers UCP errors, never 5xx, and stores nothing', async () => {
    const before = await cartCount(api);
    await refused('/ucp/catalog/search', { query: 42 }, '$.query');
    await refused('/ucp/catalog/search', { query: 'x'.repeat(501) }, '$.query');
    await refused('/ucp/catalog/search', { pagination: { cursor: 'not-a-cursor' } }, '$.pagination.cursor');
    await refused('/ucp/catalog/search', { pagination: { limit: 0 } }, '$.pagination.limit');
    await refused('/ucp/catalog/search', { filters: { price: { min: -1 } } }, '$.filters.price.min');
    await refused('/ucp/catalog/search', { query: 'a\u0000b' }, '$.query');
    await refused('/ucp/catalog/lookup', { ids: [] }, '$.ids');
    await refused('/ucp/catalog/lookup', { ids: Array.from({ length: 51 }, (_, i) => `id${i}`) }, '$.ids');
    await refused('/ucp/catalog/product', {}, '$.id');
    await refused(
      '/ucp/carts',
      { line_items: [{ item: { id: TWO_PACK }, quantity: 101 }] },
      '$.line_items[0].quantity',
    );
    await refused('/ucp/carts', { line_items: [{ item: { id: '\ud800' }, quantity: 1 }] }, '$.line_items[0].item.id');
    await refused('/ucp/checkout-sessions', { cart_id: '' }, '$.cart_id');
    const notJson = await send('POST', '/ucp/carts', profile, '{"line_items": [');
    expect([notJson.response.status, notJson.body.code]).toEqual([400, 'invalid_json']);
    const noKey = await send(
      'POST',
      '/ucp/carts',
      profile,
      { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
      {
        'Idempotency-Key': '',
      },
    );
    expect([noKey.response.status, noKey.body.code]).toEqual([400, 'idempotency_key_required']);
    const unknown = await send('POST', '/ucp/carts', profile, {
      line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }],
    });
    expect([unknown.response.status, unknown.body.messages[0]]).toEqual([
      200,
      expect.objectContaining({ code: 'not_found', path: '$.line_items[0].item.id' }),
    ]);
    const unit = await send('POST', '/ucp/carts', profile, {
      line_items: [{ item: { id: TWO_PACK, quantity_unit: { unit: 'KGM', display_text: 'kg' } }, quantity: 1 }],
    });
    expect(unit.body.messages[0]).toMatchObject({ code: 'quantity_unit_unsupported', severity: 'recoverable' });
    // The checkout's own message (one function answers both): it names the unit refused.
    expect(unit.body.messages[0].content).toContain('not in KGM at scale 0');
    expect(await cartCount(api)).toBe(before);
    const huge = await send('POST', '/ucp/catalog/search', profile, { pagination: { limit: 10_000 } });
    expect(huge.response.status).toBe(200);
    const nul = await send('GET', `/ucp/carts/${encodeURIComponent('cart_\u0000')}`, profile);
    expect(nul.body.messages[0].code).toBe('not_found');
  });

  it('a checkout session is no cart: it cannot be read, replaced or cancelled as one', async () => {
    const checkout = await send('POST', '/ucp/checkout-sessions', profile, {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
    });
    for (const answer of [
      await send('GET', `/ucp/carts/${checkout.body.id}`, profile),
      await send('PUT', `/ucp/carts/${checkout.body.id}`, profile, {
        line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
      }),
      await send('POST', `/ucp/carts/${checkout.body.id}/cancel`, profile),
    ])
      expect(answer.body.messages[0].code).toBe('not_found');
    const still = await send('GET', `/ucp/checkout-sessions/${checkout.body.id}`, profile);
    expect([still.body.status, still.body.line_items[0].quantity]).toEqual(['requires_escalation', 1]);
  });
});
