// UCP and ACP session creates are answered before Koa (src/http/session-creates.ts) by each binding's own checkout
// steps. This file holds the two paths equal, as test/session-creates.test.ts does for the checkout surface: the same
// request is answered once by the general chain (the lean path switched off for it) and once by the lean path, and the
// status, every header but Date and a generated request id, the body (but for the ids a new session is given) and the
// log line must not differ (test/support/lean-paths.ts). Every body is also checked against the protocol's schemas.
// What the lean path does not take must reach the general chain untouched.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { protocolBodyProblems } from '../src/protocols/responses.js';
import { agentToken, bearer } from './support/agent.js';
import { serverUrl } from './support/database.js';
import {
  drainingOnceCounted,
  expectSame,
  pathSender,
  probeLeanPaths,
  whileDraining,
  whilePostgresCut,
  withoutNewIds,
  type Answer,
  type Init,
  type Request,
} from './support/lean-paths.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import { PROTOCOL_ENV, startProfileServer, ucpHeaders, type ProfileServer } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

/** Whether the lean path may answer; off, every request goes on to the general chain as if it had declined. */
const lean = vi.hoisted(() => ({ on: true }));
vi.mock('../src/http/session-creates.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/http/session-creates.js')>();
  const { switchable } = await import('./support/lean-paths.js');
  return { ...actual, sessionCreatesFirst: switchable(lean, actual.sessionCreatesFirst) };
});

const LIMIT = 4;
const UCP = '/ucp/checkout-sessions';
const ACP = '/acp/checkout_sessions';
const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const UCP_SESSION = JSON.stringify({
  line_items: [
    { item: { id: TWO_PACK }, quantity: 2 },
    { item: { id: TRAVEL }, quantity: 1 },
  ],
  discounts: { codes: ['10OFF'] },
});
const ACP_SESSION = JSON.stringify({
  line_items: [
    { id: TWO_PACK, quantity: 2 },
    { id: TRAVEL, quantity: 1 },
  ],
  currency: 'usd',
  capabilities: {},
  discounts: { codes: ['10OFF'] },
});
const ACP_VERSION = '2026-04-17';
const UCP_REQUEST_ID = randomUUID();

let api: TestService;
let profiles: ProfileServer;
let token: string;
let readOnlyToken: string;
const probe = probeLeanPaths();
const newAddress = probe.newAddress;

beforeAll(async () => {
  profiles = await startProfileServer();
  // One proxy: X-Forwarded-For names the client, so each request below can count against an address of its own.
  api = await startTestService({
    env: { ...PROTOCOL_ENV, TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(LIMIT) },
    log: probe.log,
  });
  token = await agentToken(api, 'cart:write');
  readOnlyToken = await agentToken(api, 'catalog:read');
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
  probe.restore();
});

/**
 * What differs between two creates of the same session: its ids, its timestamps, and the new Idempotency-Key ACP
 * echoes (checked to be the one sent).
 */
function withoutNewValues(answer: Answer, request: Init): Answer {
  const body = withoutNewIds(answer).body.replace(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"/g, '"<time>"');
  const { 'idempotency-key': key, ...headers } = answer.headers;
  if (key !== undefined) expect(key).toBe(request.headers?.['Idempotency-Key']);
  return { ...answer, body, headers: key === undefined ? headers : { ...headers, 'idempotency-key': '<sent>' } };
}

const { sendBy: sendAsSent } = pathSender(probe, lean, () => api);

/** The protocol's own schemas accept the answer's body (the contract's were checked as it was received). */
function expectProtocolBody(url: string, answer: Answer): void {
  const path = new URL(url, api.url).pathname;
  expect(protocolBodyProblems(path, answer.status, answer.body ? JSON.parse(answer.body) : undefined)).toEqual([]);
}

/** Sends by the chosen path; checks the body against the protocol's schemas, then takes out what differs per create. */
async function sendBy(path: 'lean' | 'general', url: string, init: Request, address = newAddress(), to = api) {
  const request = typeof init === 'function' ? init() : init;
  const answer = await sendAsSent(path, to, url, request, address);
  expectProtocolBody(url, answer);
  return withoutNewValues(answer, request);
}

/** The same request by the general chain and by the lean path, each from a fresh address. */
async function bothPaths(url: string, init: Request, to = api) {
  const general = await sendBy('general', url, init, newAddress(), to);
  const second = await sendBy('lean', url, init, newAddress(), to);
  return { general, second };
}

function post(body: string | Uint8Array, headers: Record<string, string>): Init {
  return { method: 'POST', headers, body };
}

/** A UCP create from the platform whose profile is `profile` (the full one unless told), headers changed or removed. */
function ucp(
  body: string | Uint8Array = UCP_SESSION,
  extra: Record<string, string | undefined> = {},
  profile?: string,
) {
  // One Request-Id for all: the binding echoes it, and both paths must be sent the same one.
  const headers = { ...ucpHeaders(profiles.url(profile ?? '/full.json')), 'Request-Id': UCP_REQUEST_ID };
  return post(body, without(headers, extra));
}

/** An ACP create with a cart:write token, headers replaced or removed. */
function acp(body: string | Uint8Array = ACP_SESSION, extra: Record<string, string | undefined> = {}) {
  const headers = {
    ...bearer(token),
    'API-Version': ACP_VERSION,
    'Content-Type': 'application/json',
    'Idempotency-Key': randomUUID(),
  };
  return post(body, without(headers, extra));
}

/** The headers, with `extra` set over them and its undefined ones taken out. */
function without(headers: Record<string, string>, extra: Record<string, string | undefined>): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...headers, ...extra };
  return Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

const json = (value: unknown) => JSON.stringify(value);
const chunked = (init: Init): Init =>
  ({ ...init, body: new Blob([init.body as string]).stream(), duplex: 'half' }) as Init;

describe('a protocol create is answered before Koa exactly as the general chain answers it', () => {
  it.each([
    ['UCP: a session with a discount code', UCP, () => ucp(), 201],
    ['UCP: a platform that does not negotiate discounts', UCP, () => ucp(UCP_SESSION, {}, '/no-discount.json'), 201],
    [
      'UCP: a market it does not sell to, reported',
      UCP,
      () => ucp(json({ ...JSON.parse(UCP_SESSION), context: { address_country: 'AQ' } })),
      201,
    ],
    ['UCP: the caller’s own X-Request-Id', UCP, () => ucp(UCP_SESSION, { 'X-Request-Id': 'trace-7.u' }), 201],
    ['UCP: a chunked body', UCP, () => chunked(ucp()), 201],
    [
      'UCP: Content-Type with a charset',
      UCP,
      () => ucp(UCP_SESSION, { 'Content-Type': 'application/json; charset=utf-8' }),
      201,
    ],
    [
      'UCP: an unknown item (an error_response)',
      UCP,
      () => ucp(json({ line_items: [{ item: { id: 'variant_none' }, quantity: 1 }] })),
      200,
    ],
    // The platform profile.
    ['UCP: no UCP-Agent', UCP, () => ucp(UCP_SESSION, { 'UCP-Agent': undefined }), 400],
    ['UCP: a UCP-Agent without a profile', UCP, () => ucp(UCP_SESSION, { 'UCP-Agent': 'version=1' }), 400],
    [
      'UCP: a profile over http from a host not allowed',
      UCP,
      () => ucp(UCP_SESSION, { 'UCP-Agent': 'profile="http://example.com/p.json"' }),
      400,
    ],
    ['UCP: a profile that is not there', UCP, () => ucp(UCP_SESSION, {}, '/missing.json'), 424],
    ['UCP: a profile that is not JSON', UCP, () => ucp(UCP_SESSION, {}, '/not-json'), 422],
    ['UCP: a profile of another version', UCP, () => ucp(UCP_SESSION, {}, '/old-version.json'), 422],
    ['UCP: a platform without checkout', UCP, () => ucp(UCP_SESSION, {}, '/no-checkout.json'), 200],
    // Request-Id and Idempotency-Key.
    ['UCP: no Request-Id', UCP, () => ucp(UCP_SESSION, { 'Request-Id': undefined }), 400],
    ['UCP: a Request-Id that is not a UUID', UCP, () => ucp(UCP_SESSION, { 'Request-Id': 'r-1' }), 400],
    ['UCP: no Idempotency-Key', UCP, () => ucp(UCP_SESSION, { 'Idempotency-Key': undefined }), 400],
    ['UCP: an Idempotency-Key that is not a UUID', UCP, () => ucp(UCP_SESSION, { 'Idempotency-Key': 'k' }), 400],
    // The body.
    ['UCP: malformed JSON', UCP, () => ucp('{"line_items": ['), 400],
    ['UCP: an empty body', UCP, () => ucp(''), 400],
    ['UCP: an array', UCP, () => ucp('[]'), 400],
    ['UCP: a missing field', UCP, () => ucp(json({ discounts: { codes: ['10OFF'] } })), 400],
    ['UCP: an invalid quantity', UCP, () => ucp(json({ line_items: [{ item: { id: TWO_PACK }, quantity: 0 }] })), 400],
    ['UCP: nested deeper than 32 levels', UCP, () => ucp(`{"line_items":${'['.repeat(40)}${']'.repeat(40)}}`), 400],
    ['UCP: a body over 100 kB (Connection: close)', UCP, () => ucp(json({ pad: 'x'.repeat(110_000) })), 413],
    ['UCP: text', UCP, () => ucp(UCP_SESSION, { 'Content-Type': 'text/plain' }), 415],
    ['UCP: another JSON media type', UCP, () => ucp(UCP_SESSION, { 'Content-Type': 'application/vnd.api+json' }), 415],
    ['UCP: no Content-Type', UCP, () => ucp(UCP_SESSION, { 'Content-Type': undefined }), 415],
    ['UCP: a compressed body', UCP, () => ucp(gzipSync(UCP_SESSION), { 'Content-Encoding': 'gzip' }), 400],
    ['ACP: a session with a discount code', ACP, () => acp(), 201],
    ['ACP: the caller’s Request-Id, echoed', ACP, () => acp(ACP_SESSION, { 'Request-Id': 'req_42' }), 201],
    ['ACP: a chunked body', ACP, () => chunked(acp()), 201],
    [
      'ACP: an unknown item',
      ACP,
      () => acp(json({ line_items: [{ id: 'variant_none', quantity: 1 }], currency: 'usd', capabilities: {} })),
      400,
    ],
    // Authentication.
    ['ACP: no token', ACP, () => acp(ACP_SESSION, { Authorization: undefined }), 401],
    ['ACP: an unknown token', ACP, () => acp(ACP_SESSION, bearer('not-a-token')), 401],
    ['ACP: not a bearer token', ACP, () => acp(ACP_SESSION, { Authorization: 'Basic dTpw' }), 401],
    ['ACP: a token without cart:write', ACP, () => acp(ACP_SESSION, bearer(readOnlyToken)), 403],
    // Version and key.
    ['ACP: no API-Version', ACP, () => acp(ACP_SESSION, { 'API-Version': undefined }), 400],
    ['ACP: another API-Version', ACP, () => acp(ACP_SESSION, { 'API-Version': '2025-09-29' }), 400],
    ['ACP: no Idempotency-Key', ACP, () => acp(ACP_SESSION, { 'Idempotency-Key': undefined }), 400],
    ['ACP: an Idempotency-Key too long', ACP, () => acp(ACP_SESSION, { 'Idempotency-Key': 'k'.repeat(256) }), 400],
    // The body.
    ['ACP: malformed JSON', ACP, () => acp('{'), 400],
    ['ACP: an empty body', ACP, () => acp(''), 400],
    ['ACP: a missing field', ACP, () => acp(json({ currency: 'usd' })), 400],
    ['ACP: an unknown currency', ACP, () => acp(json({ ...JSON.parse(ACP_SESSION), currency: 'xyz' })), 400],
    ['ACP: a body over 100 kB (Connection: close)', ACP, () => acp(json({ pad: 'x'.repeat(110_000) })), 413],
    ['ACP: text', ACP, () => acp(ACP_SESSION, { 'Content-Type': 'text/plain' }), 415],
  ])('%s', async (_name, url, init: Request, status) => {
    const { general, second } = await bothPaths(url, init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, false]);
    expect(general.logged).toBeDefined();
    expectSame(second, general);
  });

  it.each([
    ['UCP', UCP, () => ucp(UCP_SESSION, { 'Idempotency-Key': randomUUID() })],
    ['ACP', ACP, () => acp(ACP_SESSION, { 'Idempotency-Key': randomUUID() })],
  ])(
    '%s: a key first used by either path replays by the other, and conflicts with another body',
    async (_name, url, make) => {
      for (const [first, then] of [
        ['lean', 'general'],
        ['general', 'lean'],
      ] as const) {
        const init = make();
        const send = (path: 'lean' | 'general') => sendBy(path, url, init);
        const created = await send(first);
        const replayed = await send(then);
        const again = await send(first);
        expect([created.viaKoa, replayed.viaKoa, again.viaKoa]).toEqual([
          first === 'general',
          then === 'general',
          first === 'general',
        ]);
        expect([created.status, replayed.status, replayed.headers['idempotent-replayed']]).toEqual([201, 201, 'true']);
        // The replay is the stored answer, byte for byte (ids numbered alike in both).
        expect(replayed.body).toBe(created.body);
        expectSame(again, replayed);
        const conflicting = { ...init, body: String(init.body).replace('"quantity":2', '"quantity":3') };
        const { general, second } = await bothPaths(url, conflicting);
        expect([general.status, general.viaKoa, second.viaKoa]).toEqual([url === UCP ? 409 : 422, true, false]);
        expectSame(second, general);
      }
    },
  );

  it.each([
    ['UCP', UCP, () => ucp()],
    ['UCP, with a malformed body (the limit is checked first)', UCP, () => ucp('{')],
    ['ACP', ACP, () => acp()],
    ['ACP, without a token (the limit is checked first)', ACP, () => acp(ACP_SESSION, { Authorization: undefined })],
  ])('the 429 of an address over its limit: %s', async (_name, url, init: Request) => {
    const address = newAddress();
    for (let sent = 0; sent < LIMIT; sent++)
      expect((await probe.send(api, '/checkout_sessions/cart_nothing_here', {}, address)).status).toBe(404);
    const second = await sendBy('lean', url, init, address);
    const general = await sendBy('general', url, init, address);
    expect([second.status, second.viaKoa, general.status, general.viaKoa]).toEqual([429, false, 429, true]);
    expectSame(second, general);
  });

  it.each([
    ['UCP', UCP, () => ucp()],
    ['ACP', ACP, () => acp()],
    ['UCP, a body over 100 kB', UCP, () => ucp(json({ pad: 'x'.repeat(110_000) }))],
  ])('a drain that begins while a session is created: one Connection: close: %s', async (_name, url, init: Request) => {
    const general = await drainingOnceCounted(api, () => sendBy('general', url, init));
    const second = await drainingOnceCounted(api, () => sendBy('lean', url, init));
    expect([general.viaKoa, second.viaKoa, second.headers.connection]).toEqual([true, false, 'close']);
    expectSame(second, general);
  });
});

describe('what the lean path leaves to the general chain', () => {
  it.each([
    ['UCP: a query string', `${UCP}?x=1`, () => ucp(), 201],
    ['UCP: a trailing slash', `${UCP}/`, () => ucp(), 201],
    ['UCP: another method', UCP, () => ({ ...ucp(), method: 'PUT' }), 405],
    ['ACP: a query string', `${ACP}?x=1`, () => acp(), 201],
    ['ACP: a trailing slash', `${ACP}/`, () => acp(), 201],
    ['ACP: a read of the collection', ACP, () => ({ headers: acp().headers }), 405],
  ])('%s', async (_name, url, init: Request, status) => {
    const { general, second } = await bothPaths(url, init);
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([status, true, true]);
    expectSame(second, general);
  });

  it.each([
    ['UCP', UCP, () => ucp()],
    ['ACP', ACP, () => acp()],
  ])('%s: while draining, so that every response carries Connection: close', async (_name, url, init: Request) => {
    const answer = await whileDraining(api, () => sendBy('lean', url, init));
    expect([answer.viaKoa, answer.status, answer.headers.connection]).toEqual([true, 201, 'close']);
  });
});

describe.skipIf(!serverUrl)('with PostgreSQL unreachable', () => {
  let outage: ServiceBehindProxy;
  beforeAll(async () => {
    outage = await startServiceBehindProxy({ ...PROTOCOL_ENV, TRUST_PROXY: '1' }, { log: probe.log });
  });
  afterAll(async () => {
    await outage?.close();
  });

  it('UCP: the 503 service_unavailable, with its Retry-After', async () => {
    const { general, second } = await whilePostgresCut(outage, () => bothPaths(UCP, () => ucp(), outage.api));
    expect([general.status, general.viaKoa, second.viaKoa]).toEqual([503, true, false]);
    expect(general.headers['retry-after']).toBeDefined();
    expectSame(second, general);
  });
});
