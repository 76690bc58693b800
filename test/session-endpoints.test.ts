// The checkout surface's session endpoints, GET /checkout_sessions/{id} and POST /checkout_sessions (and their
// /checkout-sessions alias): what each request is answered, its status, every header with its value (no-store, CORS,
// API-Version, RateLimit-*, Idempotent-Replayed, Retry-After, Connection: close while draining), its body in the
// checkout error shape where it fails, and its one log line. Body, media type, version, idempotency, rate limit,
// retirement notices, a drain beginning mid-request, and PostgreSQL cut.
import { request } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sortedKeysHash } from '../src/services/idempotency/index.js';
import { agentToken, bearer } from './support/agent.js';
import {
  childLoggersDuring,
  drainingOnceCounted,
  expectAnswer,
  JSON_BODY,
  NOT_STORED,
  PUBLIC_CORS,
  PUBLIC_PREFLIGHT,
  rateLimit,
  rateLimited,
  recordedService,
  whileDraining,
  whilePostgresCut,
  type Init,
  type Request,
} from './support/answers.js';
import { createdSession } from './support/checkout.js';
import { serverUrl } from './support/database.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import { payWithTestProcessor } from './support/payments.js';
import { startTestService, type TestService } from './support/service.js';

const LIMIT = 4;
const CURRENT_VERSION = '2026-07-16';
const RETIRING_ID = 'cart_retiring';
const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const ITEMS = { items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }] };
const SESSION = JSON.stringify({ ...ITEMS, promo_codes: ['10off'] });

const api = recordedService({
  limit: LIMIT,
  deprecations: [
    {
      subject: `GET /checkout_sessions/${RETIRING_ID}`,
      method: 'GET',
      path: new RegExp(`^/checkout[-_]sessions/${RETIRING_ID}$`),
      deprecatedAt: '2026-11-01',
      sunsetAt: '2027-03-01',
      description: 'Test-only retirement.',
    },
  ],
});
const { requests } = api;
const send = (path: string, init?: Request, address?: string, to: TestService = api) =>
  requests.send(to, path, init, address);
let keys = 0;
const newKey = () => `key-${process.pid}-${++keys}`;
const json = (value: unknown) => JSON.stringify(value);

/** The headers of a checkout answer to a fresh address: not stored, public CORS, the version applied. */
function checkout(extra: Record<string, unknown> = {}) {
  return {
    ...PUBLIC_CORS,
    ...JSON_BODY,
    ...NOT_STORED,
    ...rateLimit(LIMIT, LIMIT - 1),
    'api-version': CURRENT_VERSION,
    ...extra,
  };
}

/** The checkout error shape. */
const refusal = (code: string, message: string, param?: string, type = 'invalid_request') => ({
  type,
  code,
  message,
  ...(param === undefined ? {} : { param }),
});
const notFound = (id: string) => refusal('session_not_found', `No checkout session with id ${id}.`, 'id');
const unsupportedVersion = (message: string) => ({
  ...refusal('unsupported_api_version', message, 'API-Version'),
  supported_versions: [CURRENT_VERSION],
});
const UNPARSABLE = refusal(
  'invalid_body',
  'The request body could not be parsed: send well-formed JSON (or a form, on OAuth endpoints).',
  'body',
);
const RATE_LIMITED = refusal(
  'rate_limited',
  `Rate limit of ${LIMIT} requests per minute exceeded.`,
  undefined,
  'rate_limit_exceeded',
);
const UNAVAILABLE = refusal(
  'service_unavailable',
  'Checkout is temporarily unavailable; nothing was created or charged.',
  undefined,
  'service_unavailable',
);
const deprecated = {
  deprecation: '@1793491200',
  sunset: 'Mon, 01 Mar 2027 00:00:00 GMT',
  link: '<http://localhost:0/changelog>; rel="deprecation"; type="application/json"',
};

interface NewSession {
  currency?: string;
  region?: string;
  lines?: Array<[variant: string, quantity: number]>;
  total: number;
  promoCodes?: string[];
  messages?: unknown[];
}

/** A new session ready for payment, its lines, total and promo codes as given, paid by handing the buyer over. */
function newSession({
  currency = 'usd',
  region = 'reg_us',
  lines = [
    [TWO_PACK, 2],
    [TRAVEL, 1],
  ],
  total,
  promoCodes = [],
  messages = [],
}: NewSession) {
  return expect.objectContaining({
    id: expect.stringMatching(/^cart_[\w-]{16}$/),
    object: 'checkout_session',
    status: 'ready_for_payment',
    currency,
    region_id: region,
    line_items: lines.map(([id, quantity]) =>
      expect.objectContaining({ id: expect.stringMatching(/^cali_/), item: expect.objectContaining({ id, quantity }) }),
    ),
    totals: expect.objectContaining({ total: { amount: total, currency } }),
    promo_codes: promoCodes,
    messages,
    payment_provider: expect.objectContaining({
      provider: 'human_handoff',
      checkout_url: expect.stringMatching(/^http:\/\/localhost:0\/pay\/cart_/),
    }),
  });
}
/** The session SESSION creates: both lines, 10OFF applied. */
const PROMOTED = newSession({ total: 44.37, promoCodes: ['10OFF'] });

describe('GET /checkout_sessions/{id}', () => {
  let ready: any;
  let paid: string;
  let open: string;
  beforeAll(async () => {
    // Set up from addresses of their own: the limit of LIMIT per address applies to everything below.
    const setup: TestService = {
      ...api,
      http: (path, init) =>
        api.http(path, {
          ...init,
          headers: { ...(init?.headers as object), 'X-Forwarded-For': requests.newAddress() },
        }),
    };
    ready = await createdSession(setup, JSON.parse(SESSION));
    paid = (await createdSession(setup, JSON.parse(SESSION))).id;
    await payWithTestProcessor(setup, paid);
    const token = await agentToken(setup, 'cart:write');
    const cart = await send('/agent/carts', {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: json({ items: [{ id: TWO_PACK }] }),
    });
    expect(cart.status).toBe(201);
    open = cart.body.id;
  });
  const at =
    (id: () => string, spelling = 'checkout_sessions') =>
    () =>
      `/${spelling}/${id()}`;

  it.each([
    ['a session ready for payment', at(() => ready.id), {}],
    ['the same at the alias spelling', at(() => ready.id, 'checkout-sessions'), {}],
    ['API-Version: the current version', at(() => ready.id), { headers: { 'API-Version': CURRENT_VERSION } }],
    [
      'API-Version: a later date, answered in the current',
      at(() => ready.id),
      { headers: { 'API-Version': '2027-02-28' } },
    ],
    ['API-Version: empty, answered in the current', at(() => ready.id), { headers: { 'API-Version': '' } }],
    ['a browser request with an Origin', at(() => ready.id), { headers: { Origin: 'https://shop.example' } }],
  ])('%s: 200, the session as it was created', async (_name, url, init: Init) => {
    expectAnswer(await send(url(), init), { status: 200, headers: checkout(), body: ready });
  });

  it('a paid session, as its order was charged', async () => {
    expectAnswer(await send(`/checkout_sessions/${paid}`), {
      status: 200,
      headers: checkout(),
      body: expect.objectContaining({ id: paid, object: 'checkout_session', status: 'completed' }),
    });
  });

  it.each([
    ['the caller’s own request id, echoed', 'trace-42.a:b', 'trace-42.a:b'],
    ['an unsafe request id, replaced', 'no spaces', undefined],
  ])('%s', async (_name, sent, echoed) => {
    const answer = await send(`/checkout_sessions/${ready.id}`, { headers: { 'X-Request-Id': sent } });
    expectAnswer(answer, {
      status: 200,
      headers: checkout(echoed ? { 'x-request-id': echoed } : {}),
      body: ready,
    });
  });

  it.each([
    ['an unknown id', () => 'cart_nothing_here', 'checkout_sessions', {}],
    ['an unknown id at the alias spelling', () => 'cart_nothing_here', 'checkout-sessions', {}],
    ['an agent’s open cart, which is no session', () => open, 'checkout_sessions', {}],
    ['a longest id', () => `cart_${'x'.repeat(59)}`, 'checkout_sessions', {}],
    ['API-Version on an unknown id', () => 'cart_x', 'checkout_sessions', { headers: { 'API-Version': '2026-12-01' } }],
  ])('%s: 404 session_not_found', async (_name, id, spelling, init: Init) => {
    expectAnswer(await send(`/${spelling}/${id()}`, init), { status: 404, headers: checkout(), body: notFound(id()) });
  });

  it.each([
    ['a session', () => ready.id, 200],
    ['an unknown id', () => 'cart_nothing_here', 404],
  ])('HEAD of %s: the GET’s status and headers, no body', async (_name, id, status) => {
    const answer = await send(`/checkout-sessions/${id()}`, { method: 'HEAD' });
    // Node closes the connection after a HEAD that announces a body it does not send.
    expectAnswer(answer, { status, headers: checkout({ connection: 'close' }) });
    expect(answer.text).toBe('');
  });

  it.each([
    ['not a date', 'yesterday', 'API-Version must be a date (YYYY-MM-DD), got "yesterday".'],
    ['before the first', '2020-01-01', 'API-Version 2020-01-01 predates the first version, 2026-07-16.'],
    [
      'longer than the contract allows',
      CURRENT_VERSION.padEnd(40, '0'),
      `API-Version must be a date (YYYY-MM-DD), got "${CURRENT_VERSION.padEnd(40, '0')}".`,
    ],
  ])('API-Version %s: 400 unsupported_api_version', async (_name, version, message) => {
    const answer = await send(`/checkout_sessions/${ready.id}`, { headers: { 'API-Version': version } });
    expectAnswer(answer, { status: 400, headers: checkout(), body: unsupportedVersion(message) });
  });

  it.each([
    [
      'a malformed id',
      () => '/checkout_sessions/cart!1',
      refusal('invalid_field', 'id must match pattern "^[A-Za-z0-9_-]+$".', 'id'),
    ],
    [
      'an id too long',
      () => `/checkout_sessions/cart_${'x'.repeat(60)}`,
      refusal('invalid_field', 'id must NOT have more than 64 characters.', 'id'),
    ],
    [
      'a query parameter the operation does not take',
      () => `/checkout_sessions/${ready.id}?expand=all`,
      refusal('unknown_field', 'expand is not a recognised parameter.', 'expand'),
    ],
  ])('%s: 400', async (_name, url, body) => {
    expectAnswer(await send(url()), { status: 400, headers: checkout(), body });
  });

  it.each([
    ['an escaped id', () => `/checkout_sessions/${ready.id.replace('_', '%5F')}`],
    ['a trailing slash', () => `/checkout-sessions/${ready.id}/`],
  ])('%s: the session, logged by the path as sent', async (_name, url) => {
    const path = url();
    expectAnswer(await send(path), { status: 200, headers: checkout(), body: ready, loggedPath: path });
  });

  it('a retiring endpoint: Deprecation, Sunset and a Link to the changelog', async () => {
    expectAnswer(await send(`/checkout_sessions/${RETIRING_ID}`), {
      status: 404,
      headers: checkout(deprecated),
      body: notFound(RETIRING_ID),
    });
  });

  it('a CORS preflight: 204 with what may be sent', async () => {
    const answer = await send(`/checkout_sessions/${ready.id}`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' },
    });
    expectAnswer(answer, { status: 204, headers: { ...PUBLIC_PREFLIGHT, ...NOT_STORED } });
  });

  it('another method: 405 method_not_allowed with Allow', async () => {
    expectAnswer(await send(`/checkout_sessions/${ready.id}`, { method: 'DELETE' }), {
      status: 405,
      headers: checkout({ allow: 'GET, POST, HEAD' }),
      body: refusal(
        'method_not_allowed',
        `DELETE is not supported on /checkout_sessions/${ready.id}; use GET or POST or HEAD.`,
      ),
    });
  });

  it('a GET with a body: the session, the body read and ignored', async () => {
    const body = json({ id: ready.id });
    // fetch sends no body with a GET; node:http does.
    const getWithBody: TestService['http'] = (path, init) =>
      new Promise((resolve, reject) => {
        const headers = {
          ...(init?.headers as Record<string, string>),
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
        };
        const sent = request(new URL(path, api.url), { method: 'GET', headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve(
              new Response(Buffer.concat(chunks), {
                status: response.statusCode,
                headers: response.headers as Record<string, string>,
              }),
            ),
          );
        });
        sent.on('error', reject).end(body);
      });
    const answer = await send(`/checkout_sessions/${ready.id}`, {}, undefined, { ...api, http: getWithBody });
    expectAnswer(answer, { status: 200, headers: checkout(), body: ready });
  });

  it.each([
    ['a read', {}],
    ['a read with an unsupported API-Version (the limit is checked first)', { headers: { 'API-Version': 'soon' } }],
  ])('the 429 of an address over its limit: %s', async (_name, init: Init) => {
    const address = requests.newAddress();
    for (let sent = 0; sent < LIMIT; sent++) {
      const answer = await send(`/checkout_sessions/${ready.id}`, {}, address);
      expectAnswer(answer, { status: 200, headers: checkout(rateLimit(LIMIT, LIMIT - 1 - sent)), body: ready });
    }
    expectAnswer(await send(`/checkout_sessions/${ready.id}`, init, address), {
      status: 429,
      headers: checkout(rateLimited(LIMIT)),
      body: RATE_LIMITED,
    });
  });

  it('a drain that begins while the session is read: the session, with Connection: close', async () => {
    const answer = await drainingOnceCounted(api, () => send(`/checkout_sessions/${ready.id}`));
    expectAnswer(answer, { status: 200, headers: checkout({ connection: 'close' }), body: ready });
  });

  it('while draining: the session, with Connection: close', async () => {
    const answer = await whileDraining(api, () => send(`/checkout_sessions/${ready.id}`));
    expectAnswer(answer, { status: 200, headers: checkout({ connection: 'close' }), body: ready });
  });

  it('makes no pino child logger per request', async () => {
    const children = await childLoggersDuring(api, async () => {
      expect((await send(`/checkout_sessions/${ready.id}`)).status).toBe(200);
      expect((await send('/checkout_sessions/cart_nothing_here')).status).toBe(404);
    });
    expect(children).toBe(0);
  });
});

/** A create's request: a JSON body (SESSION unless given) and these headers. */
function post(body: string | Uint8Array = SESSION, headers: Record<string, string> = {}): Init {
  return { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body };
}

describe('POST /checkout_sessions', () => {
  it.each([
    ['a session with a promo code', '/checkout_sessions', () => post(), PROMOTED],
    ['the same at the alias spelling', '/checkout-sessions', () => post(), PROMOTED],
    [
      'a product handle in Europe, with a buyer email',
      '/checkout_sessions',
      () =>
        post(
          json({
            items: [{ handle: 'tongue-scraper-2-pack-travel-cases' }],
            region_id: 'reg_eu',
            buyer: { email: 'buyer@example.com' },
          }),
        ),
      newSession({ currency: 'eur', region: 'reg_eu', lines: [[TRAVEL, 1]], total: 27.93 }),
    ],
    [
      'a promo code that does not apply, reported',
      '/checkout_sessions',
      () => post(json({ ...ITEMS, coupon_code: 'nope' })),
      newSession({
        total: 49.3,
        messages: [
          {
            type: 'warning',
            code: 'promo_code_invalid',
            param: 'promo_codes[0]',
            message: 'Promo code nope is not a valid promo code; it was not applied.',
          },
        ],
      }),
    ],
    [
      'with a new Idempotency-Key',
      '/checkout_sessions',
      () => post(SESSION, { 'Idempotency-Key': newKey() }),
      PROMOTED,
    ],
    [
      'with a new Idempotency-Key at the alias',
      '/checkout-sessions',
      () => post(SESSION, { 'Idempotency-Key': newKey() }),
      PROMOTED,
    ],
    [
      'Content-Type with charset=utf-8',
      '/checkout_sessions',
      () => post(SESSION, { 'Content-Type': 'application/json; charset=UTF-8' }),
      PROMOTED,
    ],
    [
      'a charset other than UTF-8',
      '/checkout_sessions',
      () => post(SESSION, { 'Content-Type': 'application/json; charset=latin1' }),
      PROMOTED,
    ],
    [
      'API-Version: the current version',
      '/checkout_sessions',
      () => post(SESSION, { 'API-Version': CURRENT_VERSION }),
      PROMOTED,
    ],
    [
      'API-Version: a later date, answered in the current',
      '/checkout_sessions',
      () => post(SESSION, { 'API-Version': '2027-02-28' }),
      PROMOTED,
    ],
    [
      'a browser request with an Origin',
      '/checkout_sessions',
      () => post(SESSION, { Origin: 'https://shop.example' }),
      PROMOTED,
    ],
    [
      'a compressed body',
      '/checkout_sessions',
      () => post(gzipSync(SESSION), { 'Content-Encoding': 'gzip' }),
      PROMOTED,
    ],
    [
      'a chunked body',
      '/checkout-sessions',
      () => ({ ...post(), body: new Blob([SESSION]).stream(), duplex: 'half' }) as Init,
      PROMOTED,
    ],
  ])('%s: 201, the new session', async (_name, url, init: Request, body) => {
    expectAnswer(await send(url, init), { status: 201, headers: checkout(), body });
  });

  it('the caller’s own request id, echoed', async () => {
    expectAnswer(await send('/checkout_sessions', post(SESSION, { 'X-Request-Id': 'trace-42.a:b' })), {
      status: 201,
      headers: checkout({ 'x-request-id': 'trace-42.a:b' }),
      body: PROMOTED,
    });
  });

  it('a trailing slash: the new session, logged by the path as sent', async () => {
    expectAnswer(await send('/checkout_sessions/', post()), {
      status: 201,
      headers: checkout(),
      body: PROMOTED,
      loggedPath: '/checkout_sessions/',
    });
  });

  it.each([
    // The body's problems.
    ['malformed JSON', () => post('{"items": ['), UNPARSABLE],
    ['JSON that is not an object or array', () => post('"items"'), UNPARSABLE],
    ['an array', () => post('[]'), refusal('invalid_field', 'body must be object.', 'body')],
    ['an empty body', () => post(''), refusal('missing_field', 'items is required.', 'items')],
    ['a __proto__ key', () => post('{"items":[{"id":"variant_01tongue2pack"}],"__proto__":{"x":1}}'), UNPARSABLE],
    [
      'nested deeper than 32 levels',
      () => post(`{"items":${'['.repeat(40)}${']'.repeat(40)}}`),
      refusal(
        'invalid_body',
        'The body must be JSON nested at most 32 levels deep and holding at most 4,096 objects and arrays.',
        'body',
      ),
    ],
    ['an unknown encoding', () => post(SESSION, { 'Content-Encoding': 'zstd' }), UNPARSABLE],
    [
      'a missing field',
      () => post(json({ promo_codes: ['10OFF'] })),
      refusal('missing_field', 'items is required.', 'items'),
    ],
    [
      'an unknown field',
      () => post(json({ ...ITEMS, gift: true })),
      refusal('unknown_field', 'gift is not a recognised parameter.', 'gift'),
    ],
    [
      'an invalid field',
      () => post(json({ items: [{ id: TWO_PACK, quantity: 0 }] })),
      refusal('invalid_field', 'items[0].quantity must be >= 1.', 'items[0].quantity'),
    ],
    [
      'an item of no accepted form',
      () => post(json({ items: [{ colour: 'red' }] })),
      refusal('unknown_field', 'items[0].colour is not a recognised parameter.', 'items[0].colour'),
    ],
    [
      'an invalid email',
      () => post(json({ ...ITEMS, buyer: { email: 'nobody' } })),
      refusal('invalid_field', 'buyer.email must match format "email".', 'buyer.email'),
    ],
    [
      'an invalid field with an Idempotency-Key',
      () => post(json({ items: [] }), { 'Idempotency-Key': newKey() }),
      refusal('invalid_field', 'items must NOT have fewer than 1 items.', 'items'),
    ],
    [
      'an Idempotency-Key too long',
      () => post(SESSION, { 'Idempotency-Key': 'k'.repeat(256) }),
      refusal('invalid_field', 'Idempotency-Key must NOT have more than 255 characters.', 'Idempotency-Key'),
    ],
    // The media type.
    [
      'a form',
      () => post('items=1', { 'Content-Type': 'application/x-www-form-urlencoded' }),
      refusal(
        'invalid_content_type',
        'Content-Type must be application/json, not application/x-www-form-urlencoded.',
        'Content-Type',
      ),
    ],
    [
      'text',
      () => post(SESSION, { 'Content-Type': 'text/plain' }),
      refusal('invalid_content_type', 'Content-Type must be application/json, not text/plain.', 'Content-Type'),
    ],
    [
      'another JSON media type',
      () => post(SESSION, { 'Content-Type': 'application/vnd.api+json' }),
      refusal(
        'invalid_content_type',
        'Content-Type must be application/json, not application/vnd.api+json.',
        'Content-Type',
      ),
    ],
    [
      'no Content-Type',
      () => ({ method: 'POST', body: new TextEncoder().encode(SESSION) }),
      refusal('invalid_content_type', 'Content-Type must be application/json.', 'Content-Type'),
    ],
    // The version, before the body is read.
    [
      'API-Version: not a date (before the body is read)',
      () => post('{', { 'API-Version': 'soon' }),
      unsupportedVersion('API-Version must be a date (YYYY-MM-DD), got "soon".'),
    ],
    [
      'an API-Version longer than the contract allows',
      () => post(SESSION, { 'API-Version': CURRENT_VERSION.padEnd(40, '0') }),
      unsupportedVersion(`API-Version must be a date (YYYY-MM-DD), got "${CURRENT_VERSION.padEnd(40, '0')}".`),
    ],
    // The service's refusals.
    [
      'an unknown item',
      () => post(json({ items: [{ id: 'variant_nothing_here' }] })),
      refusal(
        'unknown_item',
        'No variant "variant_nothing_here" in the catalog. List products with GET /api/store/products.',
        'items[0].id',
      ),
    ],
    [
      'an unknown region',
      () => post(json({ ...ITEMS, region_id: 'reg_nowhere' })),
      refusal(
        'invalid_parameter',
        'Unknown region "reg_nowhere". Use an id from GET /api/store/regions, or omit region_id for the default region (United States, USD).',
        'region_id',
      ),
    ],
    [
      'more than the stock',
      () => post(json({ items: [{ id: TWO_PACK, quantity: 100_000 }] })),
      refusal('invalid_field', 'items[0].quantity must be <= 100.', 'items[0].quantity'),
    ],
  ])('%s: 400 in the checkout shape', async (_name, init: Request, body) => {
    expectAnswer(await send('/checkout_sessions', init), { status: 400, headers: checkout(), body });
  });

  it('a query string: 400 unknown_field', async () => {
    expectAnswer(await send('/checkout_sessions?expand=all', post()), {
      status: 400,
      headers: checkout(),
      body: refusal('unknown_field', 'expand is not a recognised parameter.', 'expand'),
    });
  });

  it('a body over 100 kB: 413 payload_too_large', async () => {
    expectAnswer(await send('/checkout_sessions', post(json({ ...ITEMS, pad: 'x'.repeat(110_000) }))), {
      status: 413,
      headers: checkout(),
      body: refusal('payload_too_large', 'The request body is larger than the 100 kB limit.', 'body'),
    });
  });

  it('another method: 405 method_not_allowed with Allow', async () => {
    expectAnswer(await send('/checkout_sessions', { ...post(), method: 'PUT' }), {
      status: 405,
      headers: checkout({ allow: 'POST' }),
      body: refusal('method_not_allowed', 'PUT is not supported on /checkout_sessions; use POST.'),
    });
  });

  it('a CORS preflight: 204 with what may be sent', async () => {
    const answer = await send('/checkout_sessions', {
      method: 'OPTIONS',
      headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'POST' },
    });
    expectAnswer(answer, { status: 204, headers: { ...PUBLIC_PREFLIGHT, ...NOT_STORED } });
  });

  it('a retiring endpoint: Deprecation, Sunset and a Link to the changelog', async () => {
    // Retirements are announced at start (each route's pipeline is compiled with the notices that can apply to it).
    const retiring = await startTestService({
      env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT) },
      log: requests.log,
      deprecations: [
        {
          subject: 'POST /checkout-sessions',
          method: 'POST',
          path: /^\/checkout-sessions$/,
          deprecatedAt: '2026-11-01',
          sunsetAt: '2027-03-01',
          description: 'Test-only retirement.',
        },
      ],
    });
    try {
      expectAnswer(await send('/checkout-sessions', post(), undefined, retiring), {
        status: 201,
        headers: checkout(deprecated),
        body: PROMOTED,
      });
      // The other spelling is not retiring.
      expectAnswer(await send('/checkout_sessions', post(), undefined, retiring), {
        status: 201,
        headers: checkout(),
        body: PROMOTED,
      });
    } finally {
      await retiring.close();
    }
  });

  describe('Idempotency-Key', () => {
    it('a replay: 201 Idempotent-Replayed, the stored session', async () => {
      const key = newKey();
      const created = await send('/checkout_sessions', post(SESSION, { 'Idempotency-Key': key }));
      expectAnswer(created, { status: 201, headers: checkout(), body: PROMOTED });
      const replayed = await send('/checkout_sessions', post(SESSION, { 'Idempotency-Key': key }));
      expectAnswer(replayed, {
        status: 201,
        headers: checkout({ 'idempotent-replayed': 'true' }),
        body: created.body,
      });
    });

    it('a replay answers in the API version it was first answered under', async () => {
      const key = newKey();
      const first = await createdSession(api, JSON.parse(SESSION), {
        'Idempotency-Key': key,
        'X-Forwarded-For': requests.newAddress(),
      });
      // As if first answered under an earlier version: the replay answers that one, not the one it asks for.
      await api.service.deps.db('idempotency_keys').where({ key }).update({ api_version: '2026-07-01' });
      const replayed = await send(
        '/checkout_sessions',
        post(json({ promo_codes: ['10off'], ...ITEMS }), { 'Idempotency-Key': key, 'API-Version': '2027-01-01' }),
      );
      expectAnswer(replayed, {
        status: 201,
        headers: checkout({ 'idempotent-replayed': 'true', 'api-version': '2026-07-01' }),
        body: first,
      });
    });

    it('the key with another body: 422 idempotency_conflict', async () => {
      const key = newKey();
      await createdSession(api, JSON.parse(SESSION), {
        'Idempotency-Key': key,
        'X-Forwarded-For': requests.newAddress(),
      });
      const answer = await send(
        '/checkout-sessions',
        post(json({ items: [{ id: TRAVEL }] }), { 'Idempotency-Key': key }),
      );
      expectAnswer(answer, {
        status: 422,
        headers: checkout(),
        body: refusal(
          'idempotency_conflict',
          'This idempotency key was already used with a different request; use a new key for a new request.',
          'Idempotency-Key',
        ),
      });
    });

    it('the key of a create still running: 409 idempotency_in_flight, with Retry-After', async () => {
      const key = newKey();
      await api.service.deps.db('idempotency_keys').insert({
        scope: 'createCheckoutSession',
        key,
        request_hash: sortedKeysHash(JSON.parse(SESSION)),
        state: 'in_flight',
        created_at: new Date(),
        expires_at: new Date(Date.now() + 86_400_000),
      });
      expectAnswer(await send('/checkout_sessions', post(SESSION, { 'Idempotency-Key': key })), {
        status: 409,
        headers: checkout({ 'retry-after': '1' }),
        body: refusal(
          'idempotency_in_flight',
          'A request with this idempotency key is still being processed; retry after a moment.',
          'Idempotency-Key',
        ),
      });
    });
  });

  it.each([
    ['a create', () => post()],
    [
      'a create with an unsupported API-Version (the limit is checked first)',
      () => post(SESSION, { 'API-Version': 'soon' }),
    ],
    ['a create with a body over 100 kB', () => post(json({ ...ITEMS, pad: 'x'.repeat(110_000) }))],
  ])('the 429 of an address over its limit: %s', async (_name, init: Request) => {
    const address = requests.newAddress();
    for (let sent = 0; sent < LIMIT; sent++)
      expect((await send('/checkout_sessions/cart_nothing_here', {}, address)).status).toBe(404);
    expectAnswer(await send('/checkout_sessions', init, address), {
      status: 429,
      headers: checkout(rateLimited(LIMIT)),
      body: RATE_LIMITED,
    });
  });

  it('a drain that begins while the session is created: the new session, with Connection: close', async () => {
    const answer = await drainingOnceCounted(api, () => send('/checkout_sessions', post()));
    expectAnswer(answer, { status: 201, headers: checkout({ connection: 'close' }), body: PROMOTED });
  });

  it('while draining: the new session, with Connection: close', async () => {
    const answer = await whileDraining(api, () => send('/checkout_sessions', post()));
    expectAnswer(answer, { status: 201, headers: checkout({ connection: 'close' }), body: PROMOTED });
  });

  it('makes no pino child logger per request', async () => {
    const children = await childLoggersDuring(api, async () => {
      expect((await send('/checkout_sessions', post())).status).toBe(201);
      expect((await send('/checkout_sessions', post('{'))).status).toBe(400);
    });
    expect(children).toBe(0);
  });
});

describe.skipIf(!serverUrl)('with PostgreSQL unreachable: 503 service_unavailable, with Retry-After', () => {
  let outage: ServiceBehindProxy;
  beforeAll(async () => {
    outage = await startServiceBehindProxy({ TRUST_PROXY: '1' }, { log: requests.log });
  });
  afterAll(async () => {
    await outage?.close();
  });

  it.each([
    ['a read', '/checkout_sessions/cart_anything', {}],
    ['a create', '/checkout_sessions', post()],
    ['a create with an Idempotency-Key', '/checkout_sessions', post(SESSION, { 'Idempotency-Key': newKey() })],
  ])('%s', async (_name, url, init: Init) => {
    const answer = await whilePostgresCut(outage, () => send(url, init, undefined, outage.api));
    // The default limit of 100,000 a minute (test/support/service.ts).
    expectAnswer(answer, {
      status: 503,
      headers: checkout({ ...rateLimit(100_000, 99_999), 'retry-after': '5' }),
      body: UNAVAILABLE,
    });
  });
});
