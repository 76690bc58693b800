// Checkout session creates are answered before Koa (src/http/session-creates.ts), with the checkout surface's steps
// written lean. This file holds the two paths equal: the same request is answered once by the general chain (the lean
// path switched off for it) and once by the lean path, and the status, every header but Date and a generated request
// id, the body (but for the ids a new session is given) and the log line must not differ
// (test/support/lean-paths.ts). What the lean path cannot answer must reach the general chain untouched.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serverUrl } from './support/database.js';
import {
  childLoggersDuring,
  drainingOnceCounted,
  expectSame,
  pathSender,
  probeLeanPaths,
  whileDraining,
  whilePostgresCut,
  withoutNewIds,
  type Init,
  type Request,
} from './support/lean-paths.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import { startTestService, type TestService } from './support/service.js';

/** Whether the lean path may answer; off, every request goes on to the general chain as if it had declined. */
const lean = vi.hoisted(() => ({ on: true }));
vi.mock('../src/http/session-creates.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/http/session-creates.js')>();
  const { switchable } = await import('./support/lean-paths.js');
  return { ...actual, sessionCreatesFirst: switchable(lean, actual.sessionCreatesFirst) };
});

const LIMIT = 4;
const CURRENT_VERSION = '2026-07-16';
const ITEMS = { items: [{ id: 'variant_01tongue2pack', quantity: 2 }, { id: 'variant_01tonguetravel' }] };
const SESSION = JSON.stringify({ ...ITEMS, promo_codes: ['10off'] });

let api: TestService;
const probe = probeLeanPaths();
const newAddress = probe.newAddress;
let keys = 0;
const newKey = () => `key-${process.pid}-${++keys}`;

beforeAll(async () => {
  // One proxy: X-Forwarded-For names the client, so each request below can count against an address of its own.
  api = await startTestService({ env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT) }, log: probe.log });
});
afterAll(async () => {
  await api?.close();
  probe.restore();
});

const { sendBy, bothPaths } = pathSender(probe, lean, () => api, withoutNewIds);
const { sendBy: sendAsSent } = pathSender(probe, lean, () => api);

/** A create's request: a JSON body (the session above unless given) and these headers. */
function post(body: string | Uint8Array = SESSION, headers: Record<string, string> = {}): Init {
  return { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body };
}

const json = (value: unknown) => JSON.stringify(value);

async function createWithKey(key: string): Promise<string> {
  const created = await probe.send(api, '/checkout_sessions', post(SESSION, { 'Idempotency-Key': key }), newAddress());
  expect(created.status).toBe(201);
  return created.body;
}

describe('a session create is answered before Koa exactly as the general chain answers it', () => {
  it.each([
    ['a session with a promo code', '/checkout_sessions', () => post(), 201],
    ['the same at the alias spelling', '/checkout-sessions', () => post(), 201],
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
      201,
    ],
    [
      'a promo code that does not apply, reported',
      '/checkout_sessions',
      () => post(json({ ...ITEMS, coupon_code: 'nope' })),
      201,
    ],
    ['with a new Idempotency-Key', '/checkout_sessions', () => post(SESSION, { 'Idempotency-Key': newKey() }), 201],
    [
      'with a new Idempotency-Key at the alias',
      '/checkout-sessions',
      () => post(SESSION, { 'Idempotency-Key': newKey() }),
      201,
    ],
    [
      'Content-Type with charset=utf-8',
      '/checkout_sessions',
      () => post(SESSION, { 'Content-Type': 'application/json; charset=UTF-8' }),
      201,
    ],
    [
      'API-Version: the current version',
      '/checkout_sessions',
      () => post(SESSION, { 'API-Version': CURRENT_VERSION }),
      201,
    ],
    ['API-Version: a later date', '/checkout_sessions', () => post(SESSION, { 'API-Version': '2027-02-28' }), 201],
    [
      'API-Version: not a date (before the body is read)',
      '/checkout_sessions',
      () => post('{', { 'API-Version': 'soon' }),
      400,
    ],
    [
      'a browser request with an Origin',
      '/checkout_sessions',
      () => post(SESSION, { Origin: 'https://shop.example' }),
      201,
    ],
    ['the caller’s own request id', '/checkout_sessions', () => post(SESSION, { 'X-Request-Id': 'trace-42.a:b' }), 201],
    // The body's problems, in the general chain's words.
    ['malformed JSON', '/checkout_sessions', () => post('{"items": ['), 400],
    ['JSON that is not an object or array', '/checkout_sessions', () => post('"items"'), 400],
    ['an array', '/checkout_sessions', () => post('[]'), 400],
    ['an empty body', '/checkout_sessions', () => post(''), 400],
    [
      'a __proto__ key',
      '/checkout_sessions',
      () => post('{"items":[{"id":"variant_01tongue2pack"}],"__proto__":{"x":1}}'),
      400,
    ],
    [
      'nested deeper than 32 levels',
      '/checkout_sessions',
      () => post(`{"items":${'['.repeat(40)}${']'.repeat(40)}}`),
      400,
    ],
    ['a body over 100 kB', '/checkout_sessions', () => post(json({ ...ITEMS, pad: 'x'.repeat(110_000) })), 413],
    ['a missing field', '/checkout_sessions', () => post(json({ promo_codes: ['10OFF'] })), 400],
    ['an unknown field', '/checkout_sessions', () => post(json({ ...ITEMS, gift: true })), 400],
    [
      'an invalid field',
      '/checkout_sessions',
      () => post(json({ items: [{ id: 'variant_01tongue2pack', quantity: 0 }] })),
      400,
    ],
    ['an item of no accepted form', '/checkout_sessions', () => post(json({ items: [{ colour: 'red' }] })), 400],
    ['an invalid email', '/checkout_sessions', () => post(json({ ...ITEMS, buyer: { email: 'nobody' } })), 400],
    [
      'an invalid field with an Idempotency-Key',
      '/checkout-sessions',
      () => post(json({ items: [] }), { 'Idempotency-Key': newKey() }),
      400,
    ],
    // The service's refusals.
    ['an unknown item', '/checkout_sessions', () => post(json({ items: [{ id: 'variant_nothing_here' }] })), 400],
    ['an unknown region', '/checkout_sessions', () => post(json({ ...ITEMS, region_id: 'reg_nowhere' })), 400],
    [
      'more than the stock',
      '/checkout_sessions',
      () => post(json({ items: [{ id: 'variant_01tongue2pack', quantity: 100_000 }] })),
      400,
    ],
  ])('%s', async (_name, url, init: Request, status) => {
    const { general, second } = await bothPaths(url, init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, false]);
    expect(general.logged).toBeDefined();
    expectSame(second, general);
  });

  it('a replay, with the API version it was first answered under', async () => {
    const key = newKey();
    const first = await createWithKey(key);
    // As if first answered under an earlier version: the replay answers that one, not the one it asks for.
    await api.service.deps.db('idempotency_keys').where({ key }).update({ api_version: '2026-07-01' });
    const { general, second } = await bothPaths('/checkout_sessions', () =>
      post(json({ promo_codes: ['10off'], ...ITEMS }), { 'Idempotency-Key': key, 'API-Version': '2027-01-01' }),
    );
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([201, true, false]);
    expect([general.headers['idempotent-replayed'], general.headers['api-version']]).toEqual(['true', '2026-07-01']);
    // The stored answer, its keys in the order the database keeps them.
    expect(JSON.parse(second.body)).toEqual(JSON.parse(withoutNewIds({ ...second, body: first }).body));
    expectSame(second, general);
  });

  it.each([
    ['lean', 'general'],
    ['general', 'lean'],
  ] as const)('a key first used by the %s path replays by the %s path', async (first, then) => {
    const key = newKey();
    // Bodies as sent, their ids too: the replay answers the very session the first request created.
    const send = (path: 'lean' | 'general') =>
      sendAsSent(path, api, '/checkout_sessions', post(SESSION, { 'Idempotency-Key': key }), newAddress());
    const created = await send(first);
    const replayed = await send(then);
    expect([created.viaKoa, replayed.viaKoa]).toEqual([first === 'general', then === 'general']);
    expect([created.status, replayed.status, replayed.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
    // Each path stores the version it applied, and the other answers it.
    expect([created.headers['api-version'], replayed.headers['api-version']]).toEqual([
      CURRENT_VERSION,
      CURRENT_VERSION,
    ]);
    expect(JSON.parse(replayed.body)).toEqual(JSON.parse(created.body));
  });

  it('422 idempotency_conflict: the key with another body', async () => {
    const key = newKey();
    await createWithKey(key);
    const { general, second } = await bothPaths('/checkout-sessions', () =>
      post(json({ items: [{ id: 'variant_01tonguetravel' }] }), { 'Idempotency-Key': key }),
    );
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([422, true, false]);
    expectSame(second, general);
  });

  it('409 idempotency_in_flight, with its Retry-After', async () => {
    const key = newKey();
    const { sortedKeysHash: requestHash } = await import('../src/services/idempotency/index.js');
    await api.service.deps.db('idempotency_keys').insert({
      scope: 'createCheckoutSession',
      key,
      request_hash: requestHash(JSON.parse(SESSION)),
      state: 'in_flight',
      created_at: new Date(),
      expires_at: new Date(Date.now() + 86_400_000),
    });
    const { general, second } = await bothPaths('/checkout_sessions', () => post(SESSION, { 'Idempotency-Key': key }));
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([409, true, false]);
    expect(general.headers['retry-after']).toBe('1');
    expectSame(second, general);
  });

  it.each([
    ['a create', () => post()],
    [
      'a create with an unsupported API-Version (the limit is checked first)',
      () => post(SESSION, { 'API-Version': 'soon' }),
    ],
    ['a create with a body over 100 kB', () => post(json({ ...ITEMS, pad: 'x'.repeat(110_000) }))],
  ])('the 429 of an address over its limit: %s', async (_name, init: Request) => {
    const address = newAddress();
    for (let sent = 0; sent < LIMIT; sent++)
      expect((await probe.send(api, '/checkout_sessions/cart_nothing_here', {}, address)).status).toBe(404);
    const second = await sendBy('lean', api, '/checkout_sessions', init, address);
    const general = await sendBy('general', api, '/checkout_sessions', init, address);
    expect([second.status, second.viaKoa, general.status, general.viaKoa]).toEqual([429, false, 429, true]);
    expectSame(second, general);
  });

  it('a drain that begins while the session is created: Connection: close, as the general chain’s last step sets it', async () => {
    const general = await drainingOnceCounted(api, () =>
      sendBy('general', api, '/checkout_sessions', post(), newAddress()),
    );
    const second = await drainingOnceCounted(api, () =>
      sendBy('lean', api, '/checkout_sessions', post(), newAddress()),
    );
    expect([general.status, general.viaKoa, second.viaKoa, second.headers.connection]).toEqual([
      201,
      true,
      false,
      'close',
    ]);
    expectSame(second, general);
  });
});

describe('what the lean path leaves to the general chain', () => {
  const chunked = (): Init =>
    ({
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: new Blob([SESSION]).stream(),
      duplex: 'half',
    }) as Init;

  it.each([
    ['a query string', '/checkout_sessions?expand=all', () => post(), 400],
    ['a trailing slash', '/checkout_sessions/', () => post(), 201],
    [
      'a form',
      '/checkout_sessions',
      () => post('items=1', { 'Content-Type': 'application/x-www-form-urlencoded' }),
      400,
    ],
    ['text', '/checkout_sessions', () => post(SESSION, { 'Content-Type': 'text/plain' }), 400],
    [
      'another JSON media type',
      '/checkout_sessions',
      () => post(SESSION, { 'Content-Type': 'application/vnd.api+json' }),
      400,
    ],
    [
      'a charset other than UTF-8',
      '/checkout_sessions',
      () => post(SESSION, { 'Content-Type': 'application/json; charset=latin1' }),
      201,
    ],
    ['no Content-Type', '/checkout_sessions', () => ({ method: 'POST', body: new TextEncoder().encode(SESSION) }), 400],
    ['a compressed body', '/checkout_sessions', () => post(gzipSync(SESSION), { 'Content-Encoding': 'gzip' }), 201],
    ['an unknown encoding', '/checkout_sessions', () => post(SESSION, { 'Content-Encoding': 'zstd' }), 400],
    ['a chunked body', '/checkout-sessions', chunked, 201],
    [
      'an Idempotency-Key too long',
      '/checkout_sessions',
      () => post(SESSION, { 'Idempotency-Key': 'k'.repeat(256) }),
      400,
    ],
    [
      'an API-Version the contract rejects',
      '/checkout_sessions',
      () => post(SESSION, { 'API-Version': CURRENT_VERSION.padEnd(40, '0') }),
      400,
    ],
    [
      'a CORS preflight',
      '/checkout_sessions',
      () => ({ method: 'OPTIONS', headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'POST' } }),
      204,
    ],
    [
      'another method',
      '/checkout_sessions',
      () => ({ method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: SESSION }),
      405,
    ],
  ])('%s', async (_name, url, init: Request, status) => {
    const { general, second } = await bothPaths(url, init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, true]);
    expectSame(second, general);
  });

  it('a retiring endpoint (Deprecation, Sunset, Link)', async () => {
    const { deprecations } = api.service.deps;
    deprecations.push({
      subject: 'POST /checkout-sessions',
      method: 'POST',
      path: /^\/checkout-sessions$/,
      deprecatedAt: '2026-11-01',
      sunsetAt: '2027-03-01',
      description: 'Test-only retirement.',
    });
    try {
      const { general, second } = await bothPaths('/checkout-sessions', () => post());
      expect([general.status, general.viaKoa, second.viaKoa]).toEqual([201, true, true]);
      expect(second.headers).toHaveProperty('deprecation');
      expectSame(second, general);
    } finally {
      deprecations.pop();
    }
  });

  it('while draining, so that every response carries Connection: close', async () => {
    const answer = await whileDraining(api, () => sendBy('lean', api, '/checkout_sessions', post(), newAddress()));
    expect([answer.viaKoa, answer.status, answer.headers.connection]).toEqual([true, 201, 'close']);
  });
});

describe('logging', () => {
  it('makes no pino child logger per request', async () => {
    const children = await childLoggersDuring(api, async () => {
      const created = await bothPaths('/checkout_sessions', () => post());
      const refused = await bothPaths('/checkout_sessions', () => post('{'));
      expect([created.second.status, refused.second.status]).toEqual([201, 400]);
    });
    expect(children).toBe(0);
  });
});

describe.skipIf(!serverUrl)('with PostgreSQL unreachable', () => {
  let outage: ServiceBehindProxy;
  beforeAll(async () => {
    outage = await startServiceBehindProxy({ TRUST_PROXY: '1' }, { log: probe.log });
  });
  afterAll(async () => {
    await outage?.close();
  });

  it.each([
    ['a create', () => post()],
    ['a create with an Idempotency-Key', () => post(SESSION, { 'Idempotency-Key': newKey() })],
  ])('the 503 service_unavailable, with its Retry-After: %s', async (_name, init: Request) => {
    const { general, second } = await whilePostgresCut(outage, () => bothPaths('/checkout_sessions', init, outage.api));
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([503, true, false]);
    expect(general.headers['retry-after']).toBeDefined();
    expectSame(second, general);
  });
});
