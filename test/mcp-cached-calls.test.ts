// Catalogue tool calls on POST /catalog/mcp, whose results the read cache keeps: what each request is answered, the
// first time and again once its result is cached (the same status, headers, JSON-RPC body and log line either way),
// arguments of the same meaning in other raw text, arguments close to a cached call's, what the transport refuses,
// the JSON-RPC 429 of an address over its limit, and a drain.
import { describe, expect, it } from 'vitest';
import {
  childLoggersDuring,
  expectAnswer,
  JSON_BODY,
  NOT_STORED,
  rateLimit,
  rateLimited,
  recordedService,
  whileDraining,
  type Answer,
  type Init,
} from './support/answers.js';

const LIMIT = 4;
const PATH = '/catalog/mcp';
const ALLOWED_ORIGIN = 'https://agents.example';
const HEADERS = {
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-06-18',
};
const TWO_PACK = 'prod_01tongue2pack';
const TRAVEL = 'prod_01tonguetravel';

const api = recordedService({ limit: LIMIT, env: { MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN } });
const { requests } = api;
const send = (init: Init, address?: string) => requests.send(api, PATH, init, address);

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

/** The request answered with the read cache emptied, then again once `fill` (the request itself unless given) was. */
async function uncachedThenCached(init: Init, fill: Init = init) {
  api.service.deps.readCache.clear();
  const uncached = await send(init);
  await send(fill);
  const cached = await send(init);
  return [uncached, cached] as const;
}

/** The headers of an MCP answer to a fresh address: not stored, CORS for the allowed origin if it sent one. */
function mcp(extra: Record<string, unknown> = {}, origin?: string) {
  return {
    ...JSON_BODY,
    ...NOT_STORED,
    ...rateLimit(LIMIT, LIMIT - 1),
    vary: 'Origin',
    ...(origin
      ? {
          'access-control-allow-origin': origin,
          'access-control-expose-headers':
            'Retry-After,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,X-Request-Id',
        }
      : {}),
    ...extra,
  };
}

/** A tool's result: its structured content, and the same as JSON text. */
const result = (id: unknown, structured: unknown) => ({
  jsonrpc: '2.0',
  id,
  result: { structuredContent: structured, content: [{ type: 'text', text: expect.any(String) }] },
});
/** A tool's refusal, in a result the model reads. */
const toolError = (text: string, id: unknown = 1) => ({
  jsonrpc: '2.0',
  id,
  result: { isError: true, content: [{ type: 'text', text }] },
});
/** A JSON-RPC error, with no request id to answer to. */
const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null });

const productsOf = (ids: string[]) =>
  expect.objectContaining({ products: ids.map((id) => expect.objectContaining({ id })) });
const ALL_PRODUCTS = productsOf([TWO_PACK, TRAVEL]);

describe('a cacheable tool call, uncached and cached', () => {
  it.each([
    ['search_products without arguments', post(SEARCH), 1, ALL_PRODUCTS],
    [
      'search_products with text, a page and a string id',
      post(call('search_products', { query: 'steel', limit: 1 }, 'a-7')),
      'a-7',
      expect.objectContaining({ products: [expect.objectContaining({ id: TWO_PACK })], limit: 1 }),
    ],
    ['search_products with defaults left out', post(call('search_products')), 1, ALL_PRODUCTS],
    [
      'get_product',
      post(call('get_product', { product: 'tongue-scraper-2-pack', region_id: 'reg_eu' }, 2)),
      2,
      expect.objectContaining({
        product: expect.objectContaining({
          id: TWO_PACK,
          variants: [expect.objectContaining({ calculated_price: expect.objectContaining({ currency_code: 'eur' }) })],
        }),
      }),
    ],
    [
      'list_reviews',
      post(call('list_reviews', { product: 'tongue-scraper-2-pack' })),
      1,
      expect.objectContaining({ reviews: expect.any(Array), count: 5, avg_rating: 4.6 }),
    ],
    [
      'list_regions',
      post(call('list_regions', {})),
      1,
      expect.objectContaining({
        regions: ['reg_us', 'reg_eu', 'reg_gb', 'reg_ca', 'reg_jp'].map((id) => expect.objectContaining({ id })),
      }),
    ],
    [
      'list_collections',
      post(call('list_collections', {})),
      1,
      { collections: [{ id: 'pcol_01tonguecare', title: 'Tongue Care', handle: 'tongue-care' }] },
    ],
    [
      'no MCP-Protocol-Version and Accept: */*',
      post(SEARCH, { 'MCP-Protocol-Version': undefined, Accept: '*/*' }),
      1,
      ALL_PRODUCTS,
    ],
    [
      'an Accept of several ranges, in capitals',
      post(SEARCH, { Accept: 'text/html, APPLICATION/JSON;q=0.5' }),
      1,
      ALL_PRODUCTS,
    ],
    // The response's bytes are put together from the id's and the result's: both must be encoded as UTF-8.
    [
      'a string id with characters to escape and to encode',
      post(call('search_products', {}, 'ü "7"\n')),
      'ü "7"\n',
      ALL_PRODUCTS,
    ],
  ])('%s: 200 with the result', async (_name, init, id, structured) => {
    const answers = await uncachedThenCached(init);
    for (const answer of answers) expectAnswer(answer, { status: 200, headers: mcp(), body: result(id, structured) });
    expect(answers[1].text).toBe(answers[0].text);
    // Its text content is the structured content, as JSON.
    expect(JSON.parse(answers[0].body.result.content[0].text)).toEqual(answers[0].body.result.structuredContent);
  });

  it('an allowed Origin: CORS for it', async () => {
    for (const answer of await uncachedThenCached(post(SEARCH, { Origin: ALLOWED_ORIGIN }))) {
      expectAnswer(answer, { status: 200, headers: mcp({}, ALLOWED_ORIGIN), body: result(1, ALL_PRODUCTS) });
    }
  });

  it.each([
    ['the caller’s own request id, echoed', 'trace-42.a:b', 'trace-42.a:b'],
    ['an unsafe request id, replaced', 'no spaces allowed', undefined],
  ])('%s', async (_name, sent, echoed) => {
    for (const answer of await uncachedThenCached(post(SEARCH, { 'X-Request-Id': sent }))) {
      expectAnswer(answer, {
        status: 200,
        headers: mcp(echoed ? { 'x-request-id': echoed } : {}),
        body: result(1, ALL_PRODUCTS),
      });
    }
  });

  it.each([
    [
      'another order and defaults spelt out',
      post(call('search_products', { offset: 0, query: 'steel' })),
      post(call('search_products', { query: 'steel' })),
    ],
    ['an escaped character', searchWithText('{"query":"st\\u0065el"}'), searchWithText('{"query":"steel"}')],
    ['1.0 for 1 and -0 for 0', searchWithText('{"limit":1.0,"offset":-0}'), searchWithText('{"limit":1,"offset":0}')],
    ['a repeated key, the last one counting', searchWithText('{"limit":50,"limit":1}'), searchWithText('{"limit":1}')],
    [
      'keys in another order and a default spelt out',
      searchWithText('{"offset":0,"limit":1}'),
      searchWithText('{"limit":1}'),
    ],
  ])('arguments of the same meaning in other raw text, the same result: %s', async (_name, init, sibling) => {
    const [siblingAnswer] = await uncachedThenCached(sibling);
    expectAnswer(siblingAnswer, { status: 200, headers: mcp(), body: result(1, expect.anything()) });
    for (const answer of await uncachedThenCached(init, sibling)) {
      expectAnswer(answer, { status: 200, headers: mcp(), body: siblingAnswer.body });
      expect(answer.text).toBe(siblingAnswer.text);
    }
  });

  it('the JSON-RPC 429 of an address over its limit, cached or not, with Retry-After', async () => {
    const address = requests.newAddress();
    api.service.deps.readCache.clear();
    for (let sent = 0; sent < LIMIT; sent++) {
      expectAnswer(await send(post(SEARCH), address), {
        status: 200,
        headers: mcp(rateLimit(LIMIT, LIMIT - 1 - sent)),
        body: result(1, ALL_PRODUCTS),
      });
    }
    const overCached = await send(post(SEARCH, { Origin: ALLOWED_ORIGIN }), address);
    api.service.deps.readCache.clear();
    const overUncached = await send(post(SEARCH, { Origin: ALLOWED_ORIGIN }), address);
    for (const answer of [overCached, overUncached]) {
      expectAnswer(answer, {
        status: 429,
        headers: mcp(rateLimited(LIMIT), ALLOWED_ORIGIN),
        body: {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32000,
            message: `Rate limit of ${LIMIT} requests per minute exceeded.`,
            data: { retry_after: Number(answer.headers['retry-after']) },
          },
        },
      });
    }
  });
});

describe('arguments close to a cached call’s get their own answer', () => {
  it.each([
    [
      'the same arguments to another tool',
      post(call('get_product', { product: 'tongue-scraper-2-pack' })),
      post(call('list_reviews', { product: 'tongue-scraper-2-pack' })),
      result(1, expect.objectContaining({ product: expect.objectContaining({ id: TWO_PACK }) })),
    ],
    [
      'a string for a number',
      searchWithText('{"limit":"1"}'),
      searchWithText('{"limit":1}'),
      toolError('Invalid arguments: limit must be integer. Fix it and call again.'),
    ],
    [
      'a number JSON cannot hold, by the largest offset',
      searchWithText('{"offset":1e400}'),
      searchWithText('{"offset":1e6}'),
      toolError('Invalid arguments: offset must be <= 1000000. Fix it and call again.'),
    ],
  ])('%s', async (_name, init, sibling, body) => {
    api.service.deps.readCache.clear();
    const cached = await send(sibling);
    expect(cached.body.result.isError).toBeUndefined();
    for (const answer of [await send(init), await send(init)])
      expectAnswer(answer, { status: 200, headers: mcp(), body });
  });
});

describe('what is not answered from the cache, with search_products’ result in it', () => {
  const oversized = {
    ...SEARCH,
    params: { ...SEARCH.params, _meta: { padding: 'x'.repeat(101 * 1024) } },
  };
  const answered = async (init: Init) => (await uncachedThenCached(init, post(SEARCH))) as readonly Answer[];

  it.each([
    [
      'bad arguments',
      post(call('search_products', { limit: 0 })),
      toolError('Invalid arguments: limit must be >= 1. Fix it and call again.'),
    ],
    [
      'an argument the schema does not know',
      post(call('search_products', { colour: 'red' })),
      toolError('Invalid arguments: colour is not a recognised parameter. Fix it and call again.'),
    ],
    [
      'an unknown tool',
      post(call('search_everything', {})),
      toolError(
        "Unknown tool search_everything; this server's tools are search_products, get_product, list_reviews, list_regions, list_collections, get_store_policies.",
      ),
    ],
    [
      'a failing call, whose result is never cached',
      post(call('get_product', { product: 'no-such-product' })),
      toolError(
        'Argument product: No product with id or handle "no-such-product". Find products with search_products.',
      ),
    ],
    [
      'arguments that are not an object',
      post(call('search_products', ['steel'] as never)),
      { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'Invalid params: arguments must be an object.' } },
    ],
    [
      'a tools/list',
      post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      {
        jsonrpc: '2.0',
        id: 3,
        result: {
          tools: [
            'search_products',
            'get_product',
            'list_reviews',
            'list_regions',
            'list_collections',
            'get_store_policies',
          ].map((name) => expect.objectContaining({ name })),
        },
      },
    ],
  ])('%s: 200', async (_name, init, body) => {
    for (const answer of await answered(init)) expectAnswer(answer, { status: 200, headers: mcp(), body });
  });

  it.each([
    ['a tool call as a notification (no id)', post({ jsonrpc: '2.0', method: 'tools/call', params: SEARCH.params })],
    ['a notification', post({ jsonrpc: '2.0', method: 'notifications/initialized' })],
  ])('%s: 202 Accepted, no body', async (_name, init) => {
    for (const answer of await answered(init)) {
      const { 'content-type': _type, ...headers } = mcp();
      expectAnswer(answer, { status: 202, headers });
      expect(answer.text).toBe('');
    }
  });

  it.each([
    [
      'a body that is not JSON',
      { ...post(SEARCH), body: '{"jsonrpc":' },
      400,
      rpcError(-32700, 'Parse error: the body is not valid JSON.'),
    ],
    [
      'a batch',
      post([SEARCH]),
      400,
      rpcError(
        -32600,
        'JSON-RPC batches are not supported (protocols 2026-07-28, 2025-11-25, 2025-06-18); send one message per request.',
      ),
    ],
    [
      'a disallowed Origin',
      post(SEARCH, { Origin: 'https://evil.example' }),
      403,
      rpcError(-32000, 'Origin https://evil.example is not allowed; set MCP_ALLOWED_ORIGINS to allow it.'),
    ],
    [
      'a wrong protocol version',
      post(SEARCH, { 'MCP-Protocol-Version': '2024-11-05' }),
      400,
      {
        jsonrpc: '2.0',
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported: ['2026-07-28', '2025-11-25', '2025-06-18'], requested: '2024-11-05' },
        },
        id: null,
      },
    ],
    [
      'a Content-Type that is not JSON',
      post(SEARCH, { 'Content-Type': 'text/plain' }),
      415,
      rpcError(-32000, 'Content-Type must be application/json.'),
    ],
    [
      'an Accept without JSON',
      post(SEARCH, { Accept: 'text/event-stream' }),
      406,
      rpcError(-32000, 'Not Acceptable: every answer is application/json; send an Accept that admits it.'),
    ],
  ])('%s: %i with a JSON-RPC error', async (_name, init: Init, status, body) => {
    for (const answer of await answered(init)) expectAnswer(answer, { status, headers: mcp(), body });
  });

  it('an oversized body: 413, and the connection closed', async () => {
    for (const answer of await answered(post(oversized))) {
      expectAnswer(answer, {
        status: 413,
        headers: mcp({ connection: 'close' }),
        body: rpcError(-32000, 'The request body is larger than the 100 kB limit.'),
      });
    }
  });

  it('a CORS preflight: 204 with what may be sent', async () => {
    const preflight = {
      method: 'OPTIONS',
      headers: { Origin: ALLOWED_ORIGIN, 'Access-Control-Request-Method': 'POST' },
    };
    for (const answer of await answered(preflight)) {
      expectAnswer(answer, {
        status: 204,
        headers: {
          ...NOT_STORED,
          vary: 'Origin',
          'access-control-allow-origin': ALLOWED_ORIGIN,
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers':
            'Content-Type,Accept,MCP-Protocol-Version,Mcp-Method,Mcp-Name,Idempotency-Key,X-Request-Id,traceparent,tracestate',
          'access-control-max-age': '600',
        },
      });
    }
  });
});

describe('while the service drains', () => {
  it('a cached call is answered as ever, with Connection: close', async () => {
    await send(post(SEARCH));
    const answer = await whileDraining(api, () => send(post(SEARCH)));
    expectAnswer(answer, { status: 200, headers: mcp({ connection: 'close' }), body: result(1, ALL_PRODUCTS) });
  });
});

describe('logging', () => {
  it('makes no pino child logger per request', async () => {
    const children = await childLoggersDuring(api, async () => {
      await uncachedThenCached(post(SEARCH));
      await uncachedThenCached(post(call('search_products', { limit: 0 })), post(SEARCH));
    });
    expect(children).toBe(0);
  });
});
