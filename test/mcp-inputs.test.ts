// MCP tool arguments carry the contract's constraints: a value REST refuses is refused by the tool too, as an isError
// result naming the argument, before any query is built from it (a NUL character in any string never reaches SQL).
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectMcp } from './support/mcp.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let catalog: Client;
let checkout: Client;
/** Bindings of every query the service sends while a test runs. */
const bindings: unknown[] = [];
beforeAll(async () => {
  api = await startTestService();
  catalog = await connectMcp(api, '/catalog/mcp');
  checkout = await connectMcp(api, '/checkout/mcp');
  api.service.deps.db.on('query', (query: { bindings?: unknown[] }) => bindings.push(...(query.bindings ?? [])));
});
afterAll(async () => {
  await catalog?.close();
  await checkout?.close();
  await api?.close();
});

const NUL = 'a\u0000b';
const TWO_PACK = 'variant_01tongue2pack';

describe('a NUL character in any string argument', () => {
  it.each([
    ['catalog', 'search_products', { query: NUL }, 'query'],
    ['catalog', 'search_products', { collection: NUL }, 'collection'],
    ['catalog', 'search_products', { region_id: NUL }, 'region_id'],
    ['catalog', 'get_product', { product: NUL }, 'product'],
    ['catalog', 'list_reviews', { product: NUL }, 'product'],
    ['catalog', 'list_collections', { handle: NUL }, 'handle'],
    ['catalog', 'get_store_policies', { region_id: NUL }, 'region_id'],
    ['checkout', 'create_checkout_session', { items: [{ sku: NUL }] }, 'items[0].sku'],
    ['checkout', 'create_checkout_session', { items: [{ id: TWO_PACK }], promo_codes: [NUL] }, 'promo_codes'],
    ['checkout', 'create_checkout_session', { items: [{ handle: NUL }] }, 'items[0].handle'],
    ['checkout', 'get_checkout_session', { id: NUL }, 'id'],
    ['checkout', 'cancel_checkout_session', { id: NUL }, 'id'],
  ] as const)('%s %s %j is an isError result naming %s, and reaches no query', async (server, tool, args, argument) => {
    bindings.length = 0;
    const outcome = await callTool(server === 'catalog' ? catalog : checkout, tool, args);
    expect(outcome.isError).toBe(true);
    expect(outcome.structured).toBeUndefined();
    expect(outcome.texts.join('\n')).toContain(argument);
    expect(outcome.texts.join('\n')).not.toMatch(/unexpected error/i);
    expect(bindings.filter((value) => typeof value === 'string' && value.includes('\u0000'))).toEqual([]);
  });
});

describe('the contract parameter constraints', () => {
  it.each([
    ['get_product', { product: 'x'.repeat(201) }, 'product'],
    ['list_collections', { handle: 'tongue care' }, 'handle'],
    ['get_store_policies', { region_id: 'reg eu' }, 'region_id'],
    ['search_products', { query: '   ' }, 'query'],
    ['search_products', { offset: 1_000_001 }, 'offset'],
  ] as const)('%s refuses %j as REST does, naming %s', async (tool, args, argument) => {
    const outcome = await callTool(catalog, tool, args);
    expect(outcome.isError).toBe(true);
    expect(outcome.texts.join('\n')).toContain(argument);
  });

  it('refuses a session id outside the contract pattern', async () => {
    const outcome = await callTool(checkout, 'get_checkout_session', { id: 'cart_../../x' });
    expect(outcome.isError).toBe(true);
    expect(outcome.texts.join('\n')).toContain('id');
  });
});

/** What sends an agent to the REST API: a route, or a header where the tool has an argument. */
const REST_WORDS = /\b(GET|POST|PUT|PATCH|DELETE) \/|Idempotency-Key|\/api\/store|\/agent\//;

describe('what a failed tool says', () => {
  it.each([
    ['catalog', 'get_product', { product: 'no-such-product' }, 'search_products'],
    ['catalog', 'list_reviews', { product: 'no-such-product' }, 'search_products'],
    ['catalog', 'search_products', { collection: 'no-such-collection' }, 'list_collections'],
    ['catalog', 'get_store_policies', { region_id: 'reg_mars' }, 'list_regions'],
    ['checkout', 'create_checkout_session', { items: [{ id: 'variant_nope' }] }, 'search_products'],
    ['checkout', 'create_checkout_session', { items: [{ sku: 'NO-SUCH-SKU' }] }, 'search_products'],
    ['checkout', 'create_checkout_session', { items: [{ id: TWO_PACK }], region_id: 'reg_mars' }, 'list_regions'],
    ['checkout', 'get_checkout_session', { id: 'cart_doesnotexist' }, 'create_checkout_session'],
  ] as const)('%s %s %j names the MCP tool %s, never a REST route', async (server, tool, args, named) => {
    const outcome = await callTool(server === 'catalog' ? catalog : checkout, tool, args);
    expect(outcome.isError).toBe(true);
    const said = outcome.texts.join('\n');
    expect(said).toContain(named);
    expect(said).not.toMatch(REST_WORDS);
  });

  it('names the idempotency_key argument, not the REST header, when a key is reused with other arguments', async () => {
    const key = `texts-${Date.now()}`;
    await callTool(checkout, 'create_checkout_session', { items: [{ id: TWO_PACK }], idempotency_key: key });
    const reused = await callTool(checkout, 'create_checkout_session', {
      items: [{ id: TWO_PACK, quantity: 2 }],
      idempotency_key: key,
    });
    expect(reused.isError).toBe(true);
    expect(reused.texts.join('\n')).toMatch(/^Argument idempotency_key: /);
    expect(reused.texts.join('\n')).not.toMatch(REST_WORDS);
  });
});
