// Checkout session reads are answered before Koa (src/http/session-reads.ts), with the checkout surface's steps written
// lean. This file holds the two paths equal: the same request is answered once by the general chain (the lean path
// switched off for it) and once by the lean path, and the status, every header but Date and a generated request id,
// the body and the log line must not differ (test/support/lean-paths.ts). What the lean path cannot answer must reach
// the general chain untouched.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { serverUrl } from './support/database.js';
import {
  childLoggersDuring,
  drainingOnceCounted,
  expectSame,
  pathSender,
  probeLeanPaths,
  whileDraining,
  whilePostgresCut,
  type Init,
} from './support/lean-paths.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import { payWithTestProcessor } from './support/payments.js';
import { createdSession } from './support/checkout.js';
import { startTestService, type TestService } from './support/service.js';

/** Whether the lean path may answer; off, every request goes on to the general chain as if it had declined. */
const lean = vi.hoisted(() => ({ on: true }));
vi.mock('../src/http/session-reads.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/http/session-reads.js')>();
  const { switchable } = await import('./support/lean-paths.js');
  return { ...actual, sessionReadsFirst: switchable(lean, actual.sessionReadsFirst) };
});

const LIMIT = 4;
const RETIRING_ID = 'cart_retiring';
const CURRENT_VERSION = '2026-07-16';

let api: TestService;
const probe = probeLeanPaths();
const newAddress = probe.newAddress;
let ready: string;
let paid: string;
let open: string;

const createSession = async (): Promise<string> =>
  (
    await createdSession(api, {
      items: [{ id: 'variant_01tongue2pack', quantity: 2 }, { id: 'variant_01tonguetravel' }],
      promo_codes: ['10off'],
    })
  ).id;

beforeAll(async () => {
  api = await startTestService({
    // One proxy: X-Forwarded-For names the client, so each request below can count against an address of its own.
    env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT) },
    log: probe.log,
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
  // Set up from addresses of their own: the limit of LIMIT per address applies to everything below.
  const setup = (init: RequestInit = {}) => ({
    ...init,
    headers: { ...init.headers, 'X-Forwarded-For': newAddress() },
  });
  const http = api.http;
  api = { ...api, http: (path, init) => http(path, setup(init)) };
  ready = await createSession();
  paid = await createSession();
  await payWithTestProcessor(api, paid);
  const token = await agentToken(api, 'cart:write');
  const cart = await api.http('/agent/carts', {
    method: 'POST',
    headers: { ...bearer(token), 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
  });
  expect(cart.status).toBe(201);
  open = ((await cart.json()) as { id: string }).id;
  api = { ...api, http };
});
afterAll(async () => {
  await api?.close();
  probe.restore();
});

const { sendBy, bothPaths } = pathSender(probe, lean, () => api);

const session =
  (id: () => string, spelling = 'checkout_sessions') =>
  () =>
    `/${spelling}/${id()}`;

describe('a session read is answered before Koa exactly as the general chain answers it', () => {
  it.each([
    ['a session ready for payment', session(() => ready), {}, 200],
    ['the same at the alias spelling', session(() => ready, 'checkout-sessions'), {}, 200],
    ['a paid session, as its order was charged', session(() => paid), {}, 200],
    ['an unknown id', session(() => 'cart_nothing_here'), {}, 404],
    ['an unknown id at the alias spelling', session(() => 'cart_nothing_here', 'checkout-sessions'), {}, 404],
    ['an agent’s open cart, which is no session', session(() => open), {}, 404],
    ['HEAD', session(() => ready), { method: 'HEAD' }, 200],
    ['HEAD of an unknown id', session(() => 'cart_nothing_here', 'checkout-sessions'), { method: 'HEAD' }, 404],
    ['API-Version: the current version', session(() => ready), { headers: { 'API-Version': CURRENT_VERSION } }, 200],
    ['API-Version: a later date', session(() => ready), { headers: { 'API-Version': '2027-02-28' } }, 200],
    ['API-Version: empty', session(() => ready), { headers: { 'API-Version': '' } }, 200],
    ['API-Version on an unknown id', session(() => 'cart_x'), { headers: { 'API-Version': '2026-12-01' } }, 404],
    ['API-Version: not a date', session(() => ready), { headers: { 'API-Version': 'yesterday' } }, 400],
    ['API-Version: before the first', session(() => ready), { headers: { 'API-Version': '2020-01-01' } }, 400],
    ['a browser request with an Origin', session(() => ready), { headers: { Origin: 'https://shop.example' } }, 200],
    ['the caller’s own request id', session(() => ready), { headers: { 'X-Request-Id': 'trace-42.a:b' } }, 200],
    ['an unsafe request id, replaced', session(() => ready), { headers: { 'X-Request-Id': 'no spaces' } }, 200],
    ['a longest id', session(() => `cart_${'x'.repeat(59)}`), {}, 404],
  ])('%s', async (_name, url, init: Init, status) => {
    const { general, second } = await bothPaths(url(), init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, false]);
    expect(general.logged).toBeDefined();
    expectSame(second, general);
  });

  it.each([
    ['a read', {}],
    ['a read with an unsupported API-Version (the limit is checked first)', { headers: { 'API-Version': 'soon' } }],
  ])('the 429 of an address over its limit: %s', async (_name, init: Init) => {
    const address = newAddress();
    for (let sent = 0; sent < LIMIT; sent++)
      expect((await probe.send(api, `/checkout_sessions/${ready}`, {}, address)).status).toBe(200);
    const second = await sendBy('lean', api, `/checkout_sessions/${ready}`, init, address);
    const general = await sendBy('general', api, `/checkout_sessions/${ready}`, init, address);
    expect([second.status, second.viaKoa, general.status, general.viaKoa]).toEqual([429, false, 429, true]);
    expectSame(second, general);
  });

  it('a drain that begins while the session is read: Connection: close, as the general chain’s last step sets it', async () => {
    const url = `/checkout_sessions/${ready}`;
    const general = await drainingOnceCounted(api, () => sendBy('general', api, url, {}, newAddress()));
    const second = await drainingOnceCounted(api, () => sendBy('lean', api, url, {}, newAddress()));
    expect([general.viaKoa, second.viaKoa, second.headers.connection]).toEqual([true, false, 'close']);
    expectSame(second, general);
  });
});

describe('what the lean path leaves to the general chain', () => {
  it.each([
    ['a malformed id', () => '/checkout_sessions/cart!1', {}, 400],
    ['an id too long', () => `/checkout_sessions/cart_${'x'.repeat(60)}`, {}, 400],
    ['an escaped id', () => `/checkout_sessions/${ready.replace('_', '%5F')}`, {}, 200],
    ['a trailing slash', () => `/checkout-sessions/${ready}/`, {}, 200],
    ['a query parameter the operation does not take', () => `/checkout_sessions/${ready}?expand=all`, {}, 400],
    [
      'an API-Version the contract rejects',
      () => `/checkout_sessions/${ready}`,
      { headers: { 'API-Version': '2026-07-16'.padEnd(40, '0') } },
      400,
    ],
    ['a retiring endpoint (Deprecation, Sunset, Link)', () => `/checkout_sessions/${RETIRING_ID}`, {}, 404],
    [
      'a CORS preflight',
      () => `/checkout_sessions/${ready}`,
      { method: 'OPTIONS', headers: { Origin: 'https://a.example', 'Access-Control-Request-Method': 'GET' } },
      204,
    ],
    ['another method', () => `/checkout_sessions/${ready}`, { method: 'DELETE' }, 405],
  ])('%s', async (_name, url, init: Init, status) => {
    const { general, second } = await bothPaths(url(), init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, true]);
    expectSame(second, general);
    if (url().includes(RETIRING_ID)) expect(second.headers).toHaveProperty('deprecation');
  });

  it('a GET with a body, which the general chain reads before it answers', async () => {
    const body = JSON.stringify({ id: ready });
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
    const { general, second } = await bothPaths(`/checkout_sessions/${ready}`, {}, { ...api, http: getWithBody });
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([200, true, true]);
    expectSame(second, general);
  });

  it('while draining, so that every response carries Connection: close', async () => {
    const answer = await whileDraining(api, () => sendBy('lean', api, `/checkout_sessions/${ready}`, {}, newAddress()));
    expect([answer.viaKoa, answer.status, answer.headers.connection]).toEqual([true, 200, 'close']);
  });
});

describe('logging', () => {
  it('makes no pino child logger per request', async () => {
    const children = await childLoggersDuring(api, async () => {
      await bothPaths(`/checkout_sessions/${ready}`);
      await bothPaths('/checkout_sessions/cart_nothing_here');
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

  it('the 503 service_unavailable, with its Retry-After', async () => {
    const { general, second } = await whilePostgresCut(outage, () =>
      bothPaths('/checkout_sessions/cart_anything', {}, outage.api),
    );
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([503, true, false]);
    expect(general.headers['retry-after']).toBeDefined();
    expectSame(second, general);
  });
});
