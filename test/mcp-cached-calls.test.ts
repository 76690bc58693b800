// Cached catalogue tool calls are answered before Koa (src/mcp/cached-calls.ts), with the MCP surface's steps written
// lean. This file holds the two paths equal: the same request is answered once by the general chain (the read cache
// just emptied) and once more with the tool's result in the cache, and the status, every header but Date and a
// generated request id, the body and the log line must not differ (test/support/lean-paths.ts). Whatever the lean path
// cannot answer (anything but a hit) must reach the general chain intact, its body included.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectSame, probeLeanPaths, type Answer, type Init } from './support/lean-paths.js';
import { startTestService, type TestService } from './support/service.js';

const LIMIT = 4;
const PATH = '/catalog/mcp';
const ALLOWED_ORIGIN = 'https://agents.example';
const HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-06-18',
};

let api: TestService;
const probe = probeLeanPaths();
const send = (init: Init, address = probe.newAddress()) => probe.send(api, PATH, init, address);

beforeAll(async () => {
  api = await startTestService({
    // One proxy: X-Forwarded-For names the client, so each request below can count against an address of its own.
    env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT), MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN },
    log: probe.log,
  });
});
afterAll(async () => {
  await api?.close();
  probe.restore();
});

const call = (name: string, args?: Record<string, unknown>, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, ...(args === undefined ? {} : { arguments: args }) },
});
const SEARCH = call('search_products', {});

/** A POST of `message` with an MCP client's headers, changed by `headers` (undefined removes one). */
function post(message: unknown, headers: Record<string, string | undefined> = {}): Init {
  const merged = Object.entries({ ...HEADERS, ...headers }).filter(
    (entry): entry is [string, string] => entry[1] !== undefined,
  );
  return { method: 'POST', headers: Object.fromEntries(merged), body: JSON.stringify(message) };
}

/** A POST of a search_products call whose arguments are this raw JSON text. */
function searchWithText(argumentsText: string): Init {
  return {
    ...post(SEARCH),
    body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_products","arguments":${argumentsText}}}`,
  };
}

/**
 * The request by the general chain (the read cache emptied), then again once `fill` (by default the request itself,
 * from another address) has been answered, so the read cache holds what the lean path would serve.
 */
async function bothPaths(init: Init, fill: Init = init) {
  api.service.deps.readCache.clear();
  const general = await send(init);
  await send(fill);
  const second = await send(init);
  return { general, second };
}

describe('a cached tool call is answered before Koa exactly as the general chain answers it', () => {
  it.each([
    ['search_products without arguments', post(SEARCH)],
    [
      'search_products with text, a page and a string id',
      post(call('search_products', { query: 'steel', limit: 1 }, 'a-7')),
    ],
    ['search_products with defaults left out', post(call('search_products'))],
    ['get_product', post(call('get_product', { product: 'tongue-scraper-2-pack', region_id: 'reg_eu' }, 2))],
    ['list_reviews', post(call('list_reviews', { product: 'tongue-scraper-2-pack' }))],
    ['list_regions', post(call('list_regions', {}))],
    ['list_collections', post(call('list_collections', {}))],
    ['an allowed Origin', post(SEARCH, { Origin: ALLOWED_ORIGIN })],
    ['the caller’s own request id', post(SEARCH, { 'X-Request-Id': 'trace-42.a:b' })],
    ['an unsafe request id, replaced', post(SEARCH, { 'X-Request-Id': 'no spaces allowed' })],
    ['no MCP-Protocol-Version and Accept: */*', post(SEARCH, { 'MCP-Protocol-Version': undefined, Accept: '*/*' })],
    ['an Accept of several ranges, in capitals', post(SEARCH, { Accept: 'text/html, APPLICATION/JSON;q=0.5' })],
    // The response's bytes are put together from the id's and the result's: both must be encoded as UTF-8.
    ['a string id with characters to escape and to encode', post(call('search_products', {}, 'ü "7"\n'))],
  ])('%s', async (_name, init) => {
    const { general, second } = await bothPaths(init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([200, true, false]);
    expect(general.logged).toBeDefined();
    expect(JSON.parse(general.body).result.isError).toBeUndefined();
    expectSame(second, general);
  });

  it('the same arguments in another order and with defaults spelt out share the entry', async () => {
    const { general, second } = await bothPaths(
      post(call('search_products', { offset: 0, query: 'steel' })),
      post(call('search_products', { query: 'steel' })),
    );
    expect([general.viaKoa, second.viaKoa]).toEqual([true, false]);
    expectSame(second, general);
  });

  // The checked cache key is remembered by the arguments' text as parsed (src/mcp/tools.ts).
  it.each([
    ['an escaped character', '{"query":"st\\u0065el"}', '{"query":"steel"}'],
    ['1.0 for 1 and -0 for 0', '{"limit":1.0,"offset":-0}', '{"limit":1,"offset":0}'],
    ['a repeated key, the last one counting', '{"limit":50,"limit":1}', '{"limit":1}'],
    ['keys in another order and a default spelt out', '{"offset":0,"limit":1}', '{"limit":1}'],
  ])('arguments of the same meaning in other raw text share the entry: %s', async (_name, text, sibling) => {
    const { general, second } = await bothPaths(searchWithText(text), searchWithText(sibling));
    expect([general.viaKoa, second.viaKoa]).toEqual([true, false]);
    expectSame(second, general);
  });

  it('the JSON-RPC 429 of an address over its limit', async () => {
    const address = probe.newAddress();
    api.service.deps.readCache.clear();
    for (let sent = 0; sent < LIMIT; sent++) expect((await send(post(SEARCH), address)).status).toBe(200);
    const lean = await send(post(SEARCH, { Origin: ALLOWED_ORIGIN }), address);
    api.service.deps.readCache.clear();
    const general = await send(post(SEARCH, { Origin: ALLOWED_ORIGIN }), address);
    expect([lean.status, lean.viaKoa, general.status, general.viaKoa]).toEqual([429, false, 429, true]);
    expectSame(...withoutTick(lean, general));
  });
});

/** The two 429s with their bodies' retry_after compared to within a second's tick, then set aside. */
function withoutTick(one: Answer, other: Answer): [Answer, Answer] {
  const retryAfter = (answer: Answer) => JSON.parse(answer.body).error.data.retry_after as number;
  expect(Math.abs(retryAfter(one) - retryAfter(other))).toBeLessThanOrEqual(1);
  const untick = (answer: Answer) => ({ ...answer, body: answer.body.replace(/"retry_after":\d+/, '') });
  return [untick(one), untick(other)];
}

describe('what the lean path leaves to the general chain, with the tool’s result in the cache', () => {
  const oversized = {
    ...SEARCH,
    params: { ...SEARCH.params, _meta: { padding: 'x'.repeat(101 * 1024) } },
  };
  it.each([
    ['bad arguments', post(call('search_products', { limit: 0 })), 200],
    ['an argument the schema does not know', post(call('search_products', { colour: 'red' })), 200],
    ['an unknown tool', post(call('search_everything', {})), 200],
    ['arguments that are not an object', post(call('search_products', ['steel'] as never)), 200],
    [
      'a tool call as a notification (no id)',
      post({ jsonrpc: '2.0', method: 'tools/call', params: SEARCH.params }),
      202,
    ],
    ['a notification', post({ jsonrpc: '2.0', method: 'notifications/initialized' }), 202],
    ['a tools/list', post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }), 200],
    ['a body that is not JSON', { ...post(SEARCH), body: '{"jsonrpc":' }, 400],
    ['a batch', post([SEARCH]), 400],
    ['an oversized body', post(oversized), 413],
    ['a disallowed Origin', post(SEARCH, { Origin: 'https://evil.example' }), 403],
    ['a wrong protocol version', post(SEARCH, { 'MCP-Protocol-Version': '2024-11-05' }), 400],
    ['a Content-Type that is not JSON', post(SEARCH, { 'Content-Type': 'text/plain' }), 415],
    ['an Accept without JSON', post(SEARCH, { Accept: 'text/event-stream' }), 406],
    [
      'a CORS preflight',
      {
        method: 'OPTIONS',
        headers: { Origin: ALLOWED_ORIGIN, 'Access-Control-Request-Method': 'POST' },
      },
      204,
    ],
  ])('%s', async (_name, init: Init, status) => {
    const { general, second } = await bothPaths(init, post(SEARCH));
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, true]);
    expectSame(second, general);
  });

  // A hit is looked up by its arguments' text: none of these may be answered from the other's entry.
  it.each([
    [
      'the same arguments to another tool',
      post(call('get_product', { product: 'tongue-scraper-2-pack' })),
      post(call('list_reviews', { product: 'tongue-scraper-2-pack' })),
    ],
    ['a string for a number', searchWithText('{"limit":"1"}'), searchWithText('{"limit":1}')],
    ['a trailing space', searchWithText('{"query":"steel "}'), searchWithText('{"query":"steel"}')],
    ['another case', searchWithText('{"query":"Steel"}'), searchWithText('{"query":"steel"}')],
    [
      'a number JSON cannot hold, by the largest offset',
      searchWithText('{"offset":1e400}'),
      searchWithText('{"offset":1e6}'),
    ],
  ])('arguments in raw text close to a cached call’s: %s', async (_name, init, sibling) => {
    api.service.deps.readCache.clear();
    const cached = await send(sibling);
    expect(JSON.parse(cached.body).result.isError).toBeUndefined();
    expect((await send(sibling)).viaKoa).toBe(false);
    expect((await send(init)).viaKoa).toBe(true);
  });

  it('a failing call, whose result is never cached', async () => {
    const missing = post(call('get_product', { product: 'no-such-product' }));
    const { general, second } = await bothPaths(missing);
    expect([general.viaKoa, second.viaKoa]).toEqual([true, true]);
    expect(JSON.parse(second.body).result.isError).toBe(true);
    expectSame(second, general);
  });

  it('while draining, so that every response carries Connection: close', async () => {
    await send(post(SEARCH));
    api.service.deps.lifecycle.draining = true;
    try {
      const answer = await send(post(SEARCH));
      expect([answer.status, answer.viaKoa, answer.headers.connection]).toEqual([200, true, 'close']);
    } finally {
      api.service.deps.lifecycle.draining = false;
    }
  });
});

describe('logging', () => {
  it('makes no pino child logger per request, on either path', async () => {
    const child = vi.spyOn(api.service.deps.log, 'child');
    try {
      const { general, second } = await bothPaths(post(SEARCH));
      expect([general.viaKoa, second.viaKoa]).toEqual([true, false]);
      await bothPaths(post(call('search_products', { limit: 0 })), post(SEARCH));
      expect(child).not.toHaveBeenCalled();
    } finally {
      child.mockRestore();
    }
  });
});
