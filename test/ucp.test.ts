// The UCP 2026-04-08 REST binding over the real service and database: discovery, negotiation from the platform
// profile, the checkout operations, money in integer minor units, and idempotency. Every body is validated against the
// OpenAPI document and the protocol's own schemas (protocolFetch).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { payWithTestProcessor } from './support/payments.js';
import { MCP_TOOLS } from '../src/conformance/checks/ucp-mcp.js';
import { ucpTotalsProblems } from '../src/conformance/invariants.js';
import { serverUrl } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';
import { jcsHash } from '../src/services/idempotency/index.js';
import {
  cartCount,
  PROTOCOL_BASE_URL,
  PROTOCOL_ENV,
  protocolFetch,
  startProfileServer,
  ucpHeaders,
  type ProfileServer,
  protocolBodyProblems,
} from './support/protocols.js';

let api: TestService;
let profiles: ProfileServer;
let full: string;
beforeAll(async () => {
  profiles = await startProfileServer();
  full = profiles.url('/full.json');
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const json = (body: unknown) => JSON.stringify(body);

function create(body: unknown, headers: Record<string, string> = ucpHeaders(full)) {
  return protocolFetch(api, '/ucp/checkout-sessions', {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : json(body),
  });
}

function amounts(totals: Array<{ type: string; amount: number }>): Array<[string, number]> {
  return totals.map((total) => [total.type, total.amount]);
}

/** U-C2: the arithmetic every checkout must satisfy. */
function expectConsistent(session: any): void {
  expect(ucpTotalsProblems(session)).toEqual([]);
}

/** A canceled or completed session refuses every change: cancel, complete and update are 409s. */
async function expectNotModifiable(path: string): Promise<void> {
  for (const [method, suffix, body] of [
    ['POST', '/cancel', undefined],
    ['POST', '/complete', { payment: {} }],
    ['PUT', '', { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] }],
  ] as const) {
    const again = await protocolFetch(api, `${path}${suffix}`, {
      method,
      headers: ucpHeaders(full),
      body: body && json(body),
    });
    expect([again.response.status, again.body.code]).toEqual([409, 'checkout_not_modifiable']);
  }
}

describe('UCP discovery', () => {
  it('U-D1/U-D2: serves the business profile, identical whatever UCP-Agent says, cacheable for 5 minutes', async () => {
    const { response, body, text } = await protocolFetch(api, '/.well-known/ucp');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(body.ucp.version).toBe('2026-08-25');
    expect(body.ucp.supported_versions).toEqual({ '2026-04-08': `${PROTOCOL_BASE_URL}/ucp/profiles/2026-04-08` });
    const older = await protocolFetch(api, '/ucp/profiles/2026-04-08');
    expect([older.response.status, older.body.ucp.version, older.body.ucp.supported_versions]).toEqual([
      200,
      '2026-04-08',
      undefined,
    ]);
    expect(older.response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(body.ucp.services['dev.ucp.shopping'].map((service: any) => [service.transport, service.endpoint])).toEqual([
      ['rest', `${PROTOCOL_BASE_URL}/ucp`],
      ['mcp', `${PROTOCOL_BASE_URL}/ucp/mcp`],
    ]);
    expect(Object.keys(body.ucp.capabilities).sort()).toEqual([
      'dev.ucp.shopping.cart',
      'dev.ucp.shopping.catalog.lookup',
      'dev.ucp.shopping.catalog.search',
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.discount',
      'dev.ucp.shopping.fulfillment',
      'dev.ucp.shopping.order',
    ]);
    expect(body.ucp.capabilities['dev.ucp.shopping.discount'][0].extends).toEqual([
      'dev.ucp.shopping.checkout',
      'dev.ucp.shopping.cart',
    ]);
    expect(body.ucp.capabilities['dev.ucp.shopping.fulfillment'][0].extends).toBe('dev.ucp.shopping.checkout');
    const [handlerName] = Object.keys(body.ucp.payment_handlers);
    expect(handlerName).toBe('com.example.shop.human_handoff');
    const [handler] = body.ucp.payment_handlers[handlerName!];
    for (const url of [
      handler.spec,
      handler.schema,
      `${PROTOCOL_BASE_URL}/policies/returns`,
      `${PROTOCOL_BASE_URL}/policies/shipping`,
    ]) {
      expect(url.startsWith(`${PROTOCOL_BASE_URL}/`)).toBe(true);
      expect((await api.http(url.slice(PROTOCOL_BASE_URL.length))).status, url).toBe(200);
    }
    const again = await protocolFetch(api, '/.well-known/ucp', {
      headers: { 'UCP-Agent': 'profile="https://x.example/p";version="2099-01-01"' },
    });
    expect(again.text).toBe(text);
    expect((await api.http('/.well-known/ucp', { method: 'POST' })).status).toBe(405);
  });
});

describe('UCP negotiation', () => {
  it('U-N1: a missing, unparsable, relative or plain-http UCP-Agent is 400 invalid_profile_url and creates nothing', async () => {
    const before = await cartCount(api);
    const body = { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] };
    for (const agent of [
      undefined,
      'garbage;;',
      'profile=/relative',
      'profile="not a url"',
      'profile="http://platform.example/profile.json"',
    ]) {
      const headers = ucpHeaders(full);
      if (agent === undefined) delete headers['UCP-Agent'];
      else headers['UCP-Agent'] = agent;
      const { response, body: error } = await create(body, headers);
      expect(response.status, agent).toBe(400);
      expect(error).toMatchObject({ code: 'invalid_profile_url', continue_url: `${PROTOCOL_BASE_URL}/` });
    }
    expect(await cartCount(api)).toBe(before);
  });

  it('U-N2: unreachable, redirected, oversized, malformed and other-version profiles get 424 / 422', async () => {
    const cases: Array<[string, number, string]> = [
      ['/missing.json', 424, 'profile_unreachable'],
      ['/redirect.json', 424, 'profile_unreachable'],
      ['/huge.json', 424, 'profile_unreachable'],
      ['/not-json', 422, 'profile_malformed'],
      ['/invalid.json', 422, 'profile_malformed'],
      ['/old-version.json', 422, 'version_unsupported'],
    ];
    for (const [path, status, code] of cases) {
      const { response, body } = await create(
        { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
        ucpHeaders(profiles.url(path)),
      );
      expect([path, response.status, body.code]).toEqual([path, status, code]);
      expect(body.content).toEqual(expect.any(String));
      expect(body.continue_url).toBe(`${PROTOCOL_BASE_URL}/`);
    }
  });

  it('fetches a profile once for the requests that name it while it is not yet cached, and keeps it', async () => {
    const profile = profiles.url(`/full.json?fresh=${randomUUID()}`);
    const fetched = () => profiles.fetches.get('/full.json') ?? 0;
    const before = fetched();
    const send = () => create({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] }, ucpHeaders(profile));
    const answers = await Promise.all(Array.from({ length: 6 }, send));
    expect(answers.map((answer) => answer.response.status)).toEqual(Array(6).fill(201));
    expect((await send()).response.status).toBe(201);
    expect(fetched() - before).toBe(1);
  });

  it('U-N3: a profile without checkout is a 200 capabilities_incompatible error_response and creates nothing', async () => {
    const before = await cartCount(api);
    const { response, body } = await create(
      { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
      ucpHeaders(profiles.url('/no-checkout.json')),
    );
    expect(response.status).toBe(200);
    expect(body.ucp).toEqual({ version: '2026-04-08', status: 'error', capabilities: {} });
    expect(body.messages).toEqual([
      expect.objectContaining({ type: 'error', code: 'capabilities_incompatible', severity: 'unrecoverable' }),
    ]);
    expect(await cartCount(api)).toBe(before);
  });

  it('U-N4: without the discount capability, codes are ignored with a warning and no discounts object', async () => {
    const { response, body } = await create(
      { line_items: [{ item: { id: TWO_PACK }, quantity: 2 }], discounts: { codes: ['10OFF'] } },
      ucpHeaders(profiles.url('/no-discount.json')),
    );
    expect(response.status).toBe(201);
    expect(Object.keys(body.ucp.capabilities)).toEqual(['dev.ucp.shopping.checkout']);
    expect(body.discounts).toBeUndefined();
    expect(body.totals.map((total: any) => total.type)).not.toContain('items_discount');
    expect(body.messages).toContainEqual(
      expect.objectContaining({ type: 'warning', code: 'discount_not_negotiated', path: '$.discounts' }),
    );
  });

  it('U-H1: Request-Id and Idempotency-Key must be UUIDs and are required; Request-Id is echoed', async () => {
    const body = { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] };
    const cases: Array<[Record<string, string | undefined>, string]> = [
      [{ 'Request-Id': undefined }, 'request_id_required'],
      [{ 'Request-Id': 'abc' }, 'invalid_request_id'],
      [{ 'Idempotency-Key': undefined }, 'idempotency_key_required'],
      [{ 'Idempotency-Key': 'not-a-uuid' }, 'invalid_idempotency_key'],
    ];
    for (const [change, code] of cases) {
      const headers = ucpHeaders(full);
      for (const [name, value] of Object.entries(change)) {
        if (value === undefined) delete headers[name];
        else headers[name] = value;
      }
      const { response, body: error } = await create(body, headers);
      expect([response.status, error.code]).toEqual([400, code]);
    }
    const requestId = randomUUID();
    const { response } = await create(body, ucpHeaders(full, { 'Request-Id': requestId }));
    expect(response.headers.get('request-id')).toBe(requestId);
  });
});

describe('UCP checkout', () => {
  it('U-C1/U-C6: create with 10OFF prices in integer minor units, with the hand-off', async () => {
    const { response, body } = await create({
      line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
      discounts: { codes: ['10OFF'] },
      buyer: { email: 'buyer@example.com' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body).toMatchObject({
      status: 'requires_escalation',
      currency: 'USD',
      buyer: { email: 'buyer@example.com' },
      payment: { instruments: [] },
    });
    const [line] = body.line_items;
    expect(line.item).toMatchObject({ id: TWO_PACK, price: 1299 });
    expect(amounts(line.totals)).toEqual([
      ['subtotal', 2598],
      ['items_discount', -260],
      ['tax', 170],
      ['total', 2508],
    ]);
    expect(amounts(body.totals)).toEqual([
      ['subtotal', 2598],
      ['items_discount', -260],
      ['fulfillment', 495],
      ['tax', 170],
      ['total', 3003],
    ]);
    expect(body.discounts.applied).toEqual([
      {
        code: '10OFF',
        title: '10% off',
        amount: 260,
        automatic: false,
        method: 'across',
        priority: 1,
        allocations: [{ path: '$.line_items[0]', amount: 260 }],
      },
    ]);
    expect(body.continue_url).toBe(`${PROTOCOL_BASE_URL}/pay/${body.id}`);
    expect(body.messages[0]).toMatchObject({
      type: 'error',
      code: 'payment_handoff_required',
      severity: 'requires_buyer_input',
      path: '$.continue_url',
    });
    expectConsistent(body);
  });

  it('U-C3: the market comes from context.address_country; JPY amounts are whole yen', async () => {
    const eur = (
      await create({
        line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
        context: { address_country: 'de' },
        discounts: { codes: ['10OFF'] },
      })
    ).body;
    expect(eur.currency).toBe('EUR');
    expectConsistent(eur);
    const jpy = (
      await create({
        line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
        context: { address_country: 'JP' },
        discounts: { codes: ['10OFF'] },
      })
    ).body;
    expect(jpy.currency).toBe('JPY');
    expect(amounts(jpy.totals)).toEqual([
      ['subtotal', 1900],
      ['items_discount', -190],
      ['fulfillment', 600],
      ['tax', 171],
      ['total', 2481],
    ]);
    const unknown = (
      await create({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }], context: { address_country: 'ZZ' } })
    ).body;
    expect(unknown.currency).toBe('USD');
    expect(unknown.messages).toContainEqual(
      expect.objectContaining({ type: 'info', code: 'market_defaulted', path: '$.context.address_country' }),
    );
  });

  it('U-C4/U-C5: rejected codes are warnings at their index, mapped as the design says; codes are echoed as sent', async () => {
    const codes = ['NOPE99', 'spring20', 'LAUNCH50', 'NEWYEAR27', '10OFF', '10off', 'WELCOME5'];
    const { body } = await create({ line_items: [{ item: { id: TWO_PACK }, quantity: 2 }], discounts: { codes } });
    expect(body.discounts.codes).toEqual(codes);
    const warnings = body.messages
      .filter((message: any) => message.type === 'warning')
      .map((message: any) => [message.path, message.code]);
    expect(warnings).toEqual([
      ['$.discounts.codes[0]', 'discount_code_invalid'],
      ['$.discounts.codes[1]', 'discount_code_expired'],
      ['$.discounts.codes[2]', 'discount_code_usage_limit_reached'],
      ['$.discounts.codes[3]', 'discount_code_invalid'],
      ['$.discounts.codes[5]', 'discount_code_already_applied'],
      ['$.discounts.codes[6]', 'discount_code_combination_disallowed'],
    ]);
    const jpy = (
      await create({
        line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
        context: { address_country: 'JP' },
        discounts: { codes: ['WELCOME5'] },
      })
    ).body;
    expect(jpy.messages).toContainEqual(
      expect.objectContaining({ code: 'discount_code_user_ineligible', path: '$.discounts.codes[0]' }),
    );
    expect(jpy.discounts.applied).toEqual([]);
    const belowMinimum = (
      await create({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }], discounts: { codes: ['WELCOME5'] } })
    ).body;
    expect(belowMinimum.messages).toContainEqual(
      expect.objectContaining({ code: 'discount_code_minimum_not_met', path: '$.discounts.codes[0]' }),
    );
    expect(belowMinimum.discounts.applied).toEqual([]);
  });

  it('U-C7: items that cannot be bought answer 200 error_response, one message per line, and create nothing', async () => {
    const before = await cartCount(api);
    const { response, body } = await create({
      line_items: [
        { item: { id: 'variant_nope' }, quantity: 1 },
        { item: { id: 'tongue-scraper' }, quantity: 1 },
        { item: { id: TWO_PACK }, quantity: 60 },
        { item: { id: TWO_PACK }, quantity: 60 },
      ],
    });
    expect(response.status).toBe(200);
    expect(body.ucp.status).toBe('error');
    expect(body.messages.map((message: any) => [message.code, message.path, message.severity])).toEqual([
      ['not_found', '$.line_items[0].item.id', 'unrecoverable'],
      ['not_found', '$.line_items[1].item.id', 'unrecoverable'],
      ['quantity_exceeded', '$.line_items[2].quantity', 'unrecoverable'],
    ]);
    expect(await cartCount(api)).toBe(before);
  });

  it('U-C8/U-C9: invalid bodies are 400 with a path; response-only fields in a request are ignored', async () => {
    const cases: Array<[unknown, string]> = [
      [{ line_items: [{ item: { id: TWO_PACK }, quantity: 0 }] }, '$.line_items[0].quantity'],
      [{ line_items: [{ item: { id: TWO_PACK }, quantity: 101 }] }, '$.line_items[0].quantity'],
      [{ line_items: [] }, '$.line_items'],
      [
        {
          line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
          discounts: { codes: Array.from({ length: 21 }, (_, i) => `C${i}`) },
        },
        '$.discounts.codes',
      ],
    ];
    for (const [body, path] of cases) {
      const { response, body: error } = await create(body);
      expect([response.status, error.code, error.path]).toEqual([400, 'invalid_request', path]);
    }
    const malformed = await create('{"line_items":');
    expect([malformed.response.status, malformed.body.code]).toEqual([400, 'invalid_json']);
    const plain = await create('hello', ucpHeaders(full, { 'Content-Type': 'text/plain' }));
    expect([plain.response.status, plain.body.code]).toEqual([415, 'unsupported_media_type']);
    const ignored = await create({
      id: 'mine',
      status: 'completed',
      currency: 'EUR',
      totals: [],
      ucp: {},
      line_items: [{ id: 'x', item: { id: TWO_PACK, price: 1 }, quantity: 1, totals: [] }],
    });
    expect(ignored.response.status).toBe(201);
    expect(ignored.body).toMatchObject({ status: 'requires_escalation', currency: 'USD' });
    expect(ignored.body.id).not.toBe('mine');
    expect(ignored.body.line_items[0].item.price).toBe(1299);
  });

  it('U-G1: get answers what create answered; unknown ids and open agent carts are not_found; legacy sessions are readable', async () => {
    const created = await create({
      line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
      discounts: { codes: ['10OFF'] },
    });
    const read = await protocolFetch(api, `/ucp/checkout-sessions/${created.body.id}`, { headers: ucpHeaders(full) });
    expect(read.text).toBe(created.text);
    const unknown = await protocolFetch(api, '/ucp/checkout-sessions/cart_nope', { headers: ucpHeaders(full) });
    expect(unknown.response.status).toBe(200);
    expect(unknown.body.messages).toEqual([expect.objectContaining({ code: 'not_found', severity: 'unrecoverable' })]);
    const token = await agentToken(api, 'cart:write');
    const openCart = await api.http('/agent/carts', {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: json({ items: [{ id: TWO_PACK }] }),
    });
    const openId = ((await openCart.json()) as { id: string }).id;
    const asUcp = await protocolFetch(api, `/ucp/checkout-sessions/${openId}`, { headers: ucpHeaders(full) });
    expect(asUcp.body.messages[0].code).toBe('not_found');
    const legacy = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: json({ items: [{ id: TWO_PACK, quantity: 1 }] }),
    });
    const legacyId = ((await legacy.json()) as { id: string }).id;
    const viaUcp = await protocolFetch(api, `/ucp/checkout-sessions/${legacyId}`, { headers: ucpHeaders(full) });
    expect(viaUcp.body).toMatchObject({ id: legacyId, status: 'requires_escalation' });
  });

  it('U-U1/U-U2/U-R1: PUT replaces lines, buyer and codes, keeping line ids; an unknown item leaves the checkout unchanged', async () => {
    const created = (
      await create({
        line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
        discounts: { codes: ['10OFF'] },
        buyer: { email: 'a@example.com', first_name: 'Ada' },
      })
    ).body;
    const path = `/ucp/checkout-sessions/${created.id}`;
    const lineId = created.line_items[0].id;
    const updated = await protocolFetch(api, path, {
      method: 'PUT',
      headers: ucpHeaders(full),
      body: json({
        line_items: [{ id: lineId, item: { id: TWO_PACK }, quantity: 3 }],
        discounts: { codes: ['10OFF'] },
      }),
    });
    expect(updated.response.status).toBe(200);
    expect(updated.body.line_items).toEqual([expect.objectContaining({ id: lineId, quantity: 3 })]);
    expect(updated.body.buyer).toBeUndefined();
    expect(amounts(updated.body.totals)[0]).toEqual(['subtotal', 3897]);
    expectConsistent(updated.body);
    const fresh = await protocolFetch(api, path, { headers: ucpHeaders(full) });
    expect(fresh.text).toBe(updated.text);
    const cleared = await protocolFetch(api, path, {
      method: 'PUT',
      headers: ucpHeaders(full),
      body: json({ line_items: [{ item: { id: TWO_PACK }, quantity: 3 }] }),
    });
    expect(cleared.body.discounts).toEqual({ codes: [], applied: [] });
    expect(cleared.body.line_items[0].id).toBe(lineId);
    const rejected = await protocolFetch(api, path, {
      method: 'PUT',
      headers: ucpHeaders(full),
      body: json({ line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }] }),
    });
    expect(rejected.response.status).toBe(200);
    expect(rejected.body.line_items).toEqual(cleared.body.line_items);
    expect(rejected.body.messages).toContainEqual(
      expect.objectContaining({
        type: 'error',
        code: 'not_found',
        severity: 'recoverable',
        path: '$.line_items[0].item.id',
      }),
    );
  });

  it('U-P1/U-X1/U-U3: complete keeps the hand-off; cancel is final; every change after it is 409; a same-key cancel replays', async () => {
    const created = (await create({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] })).body;
    const path = `/ucp/checkout-sessions/${created.id}`;
    const completed = await protocolFetch(api, `${path}/complete`, {
      method: 'POST',
      headers: ucpHeaders(full),
      body: json({ payment: { instruments: [] } }),
    });
    expect(completed.response.status).toBe(200);
    expect(completed.body).toMatchObject({ status: 'requires_escalation', continue_url: created.continue_url });
    expect(completed.body.order).toBeUndefined();
    const noPayment = await protocolFetch(api, `${path}/complete`, {
      method: 'POST',
      headers: ucpHeaders(full),
      body: json({}),
    });
    expect([noPayment.response.status, noPayment.body.code, noPayment.body.path]).toEqual([
      400,
      'invalid_request',
      '$.payment',
    ]);

    const cancelHeaders = ucpHeaders(full);
    const canceled = await protocolFetch(api, `${path}/cancel`, { method: 'POST', headers: cancelHeaders });
    expect(canceled.response.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect(canceled.body.continue_url).toBeUndefined();
    expect(canceled.body.messages.map((message: any) => message.code)).not.toContain('payment_handoff_required');
    const legacy = (await (await api.http(`/checkout_sessions/${created.id}`)).json()) as { status: string };
    expect(legacy.status).toBe('canceled');

    const replay = await protocolFetch(api, `${path}/cancel`, {
      method: 'POST',
      headers: { ...cancelHeaders, 'Request-Id': randomUUID() },
    });
    expect(replay.response.status).toBe(200);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(canceled.text);
    await expectNotModifiable(path);
  });
});

describe('UCP after payment', () => {
  it('a session paid on the pay page is completed with its order; it can no longer change', async () => {
    const created = (
      await create({ line_items: [{ item: { id: TWO_PACK }, quantity: 2 }], discounts: { codes: ['10OFF'] } })
    ).body;
    await payWithTestProcessor(api, created.id);
    const path = `/ucp/checkout-sessions/${created.id}`;
    const { body } = await protocolFetch(api, path, { headers: ucpHeaders(full) });
    expect(body.status).toBe('completed');
    expect(body.order).toEqual({
      id: expect.stringMatching(/^order_/),
      permalink_url: expect.stringMatching(/^https:\/\/shop\.example\.com\/orders\//),
      label: expect.any(String),
    });
    expect(body.continue_url).toBeUndefined();
    expect(body.messages.map((message: any) => message.code)).not.toContain('payment_handoff_required');
    expect(amounts(body.totals)).toEqual(amounts(created.totals));
    await expectNotModifiable(path);
  });
});

/** One tools/call on /ucp/mcp; a result's structuredContent is checked against the protocol schemas like a REST body. */
async function mcpCall(name: string, args: unknown, rpcId: number | string = 1) {
  const response = await api.http('/ucp/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: json({ jsonrpc: '2.0', id: rpcId, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await response.json()) as any;
  if (body.result) {
    const restPath = name === 'create_checkout' ? '/ucp/checkout-sessions' : '/ucp/checkout-sessions/x';
    expect(protocolBodyProblems(restPath, 200, body.result.structuredContent)).toEqual([]);
    expect(JSON.parse(body.result.content[0].text)).toEqual(body.result.structuredContent);
    expect(body.result.isError).toBe(false);
  }
  return { status: response.status, body };
}

describe('UCP over MCP', () => {
  const meta = (extra: Record<string, unknown> = {}) => ({ 'ucp-agent': { profile: full }, ...extra });

  it('U-M1: lists the checkout tools; meta.ucp-agent is required, and idempotency-key on complete and cancel', async () => {
    const list = await api.http('/ucp/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: json({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const tools = ((await list.json()) as any).result.tools;
    // The checkout capability's tools as the conformance runner's ucp.mcp.tools check knows them (mcp.openrpc.json),
    // first, then the catalog's and the cart's (test/ucp-catalog-cart.test.ts).
    expect(tools.map((tool: any) => tool.name).slice(0, 5)).toEqual(MCP_TOOLS['dev.ucp.shopping.checkout']);
    const noAgent = await mcpCall('create_checkout', {
      meta: {},
      checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
    });
    expect([noAgent.status, noAgent.body.error.code]).toEqual([400, -32602]);
    for (const name of ['complete_checkout', 'cancel_checkout']) {
      const noKey = await mcpCall(name, { meta: meta(), id: 'cart_x', checkout: { payment: {} } });
      expect([noKey.status, noKey.body.error.code, noKey.body.error.data.path]).toEqual([
        400,
        -32602,
        "$.meta['idempotency-key']",
      ]);
    }
  });

  it('U-M2: every tool answers the REST body for the same state', async () => {
    const created = await mcpCall('create_checkout', {
      meta: meta(),
      checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 2 }], discounts: { codes: ['10OFF'] } },
    });
    const checkout = created.body.result.structuredContent;
    expect(checkout.status).toBe('requires_escalation');
    const rest = await protocolFetch(api, `/ucp/checkout-sessions/${checkout.id}`, { headers: ucpHeaders(full) });
    expect(checkout).toEqual(rest.body);
    const got = await mcpCall('get_checkout', { meta: meta(), id: checkout.id });
    expect(got.body.result.structuredContent).toEqual(rest.body);
    const updated = await mcpCall('update_checkout', {
      meta: meta(),
      id: checkout.id,
      checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 3 }] },
    });
    expect(updated.body.result.structuredContent.line_items[0].quantity).toBe(3);
    const withId = await mcpCall('update_checkout', {
      meta: meta(),
      id: checkout.id,
      checkout: { id: checkout.id, line_items: [] },
    });
    expect(withId.body.error.code).toBe(-32602);
    const completed = await mcpCall('complete_checkout', {
      meta: meta({ 'idempotency-key': randomUUID() }),
      id: checkout.id,
      checkout: { payment: {} },
    });
    expect(completed.body.result.structuredContent.status).toBe('requires_escalation');
    const canceled = await mcpCall('cancel_checkout', {
      meta: meta({ 'idempotency-key': randomUUID() }),
      id: checkout.id,
    });
    expect(canceled.body.result.structuredContent.status).toBe('canceled');
    const again = await mcpCall('cancel_checkout', {
      meta: meta({ 'idempotency-key': randomUUID() }),
      id: checkout.id,
    });
    expect([again.status, again.body.error.code, again.body.error.data.code]).toEqual([
      409,
      -32000,
      'checkout_not_modifiable',
    ]);
  });

  it('U-M3: negotiation failures are -32001 with the REST status; same key and arguments with another JSON-RPC id replay', async () => {
    const unreachable = await mcpCall('get_checkout', {
      meta: { 'ucp-agent': { profile: profiles.url('/missing.json') } },
      id: 'cart_x',
    });
    expect([unreachable.status, unreachable.body.error.code, unreachable.body.error.data.code]).toEqual([
      424,
      -32001,
      'profile_unreachable',
    ]);
    const old = await mcpCall('get_checkout', {
      meta: { 'ucp-agent': { profile: profiles.url('/old-version.json') } },
      id: 'cart_x',
    });
    expect([old.status, old.body.error.code]).toEqual([422, -32001]);
    const key = randomUUID();
    const args = {
      meta: meta({ 'idempotency-key': key }),
      checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
    };
    const first = await mcpCall('create_checkout', args, 1);
    const before = await cartCount(api);
    const replay = await mcpCall(
      'create_checkout',
      { checkout: args.checkout, meta: meta({ 'idempotency-key': key }) },
      'other-id',
    );
    expect(replay.body.result.content[0].text).toBe(first.body.result.content[0].text);
    expect(await cartCount(api)).toBe(before);
    const conflict = await mcpCall(
      'create_checkout',
      { ...args, checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 2 }] } },
      3,
    );
    expect([conflict.status, conflict.body.error.code, conflict.body.error.data.code]).toEqual([
      409,
      -32000,
      'idempotency_conflict',
    ]);
  });

  it('U-M4: a name every object has (toString, constructor, __proto__) names no tool: -32602 at $.name, never a 500', async () => {
    for (const name of ['toString', 'constructor', '__proto__']) {
      const call = await mcpCall(name, { meta: meta(), id: 'cart_x' });
      expect([call.status, call.body.error.code, call.body.error.data.path], name).toEqual([400, -32602, '$.name']);
    }
  });
});

describe('UCP idempotency', () => {
  it('U-I1: same key and same parameters (keys reordered) replay byte for byte; other parameters are 409; no second cart', async () => {
    const headers = ucpHeaders(full);
    const first = await create(
      '{"line_items":[{"item":{"id":"variant_01tongue2pack"},"quantity":2}],"discounts":{"codes":["10OFF"]}}',
      headers,
    );
    const before = await cartCount(api);
    const replay = await create(
      '{"discounts":{"codes":["10OFF"]},"line_items":[{"quantity":2.0,"item":{"id":"variant_01tongue2pack"}}]}',
      { ...headers, 'Request-Id': randomUUID() },
    );
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    const conflict = await create(
      { line_items: [{ item: { id: TWO_PACK }, quantity: 3 }] },
      { ...headers, 'Request-Id': randomUUID() },
    );
    expect([conflict.response.status, conflict.body.code]).toEqual([409, 'idempotency_conflict']);
    expect(await cartCount(api)).toBe(before);
  });

  it('U-I2: concurrent creates under one key store one checkout; a 5xx is not stored, so a retry runs', async () => {
    const before = await cartCount(api);
    const headers = ucpHeaders(full);
    const body = json({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] });
    const send = () =>
      protocolFetch(api, '/ucp/checkout-sessions', {
        method: 'POST',
        headers: { ...headers, 'Request-Id': randomUUID() },
        body,
      });
    const answers = await Promise.all(Array.from({ length: 6 }, send));
    const created = answers.filter((answer) => answer.response.status === 201);
    const inFlight = answers.filter((answer) => answer.response.status === 503);
    expect(created.length + inFlight.length).toBe(answers.length);
    expect(new Set(created.map((answer) => answer.body.id)).size).toBe(1);
    for (const answer of inFlight) {
      expect(answer.body.code).toBe('idempotency_in_flight');
      expect(answer.response.headers.get('retry-after')).toBe('1');
    }
    expect(await cartCount(api)).toBe(before + 1);

    // A failure the store did not expect (here: the cart insert raises) answers 500 and frees the key.
    const db = api.service.deps.db;
    await db.raw(
      `create function fail_cart_insert() returns trigger language plpgsql as $$ begin raise exception 'injected'; end $$`,
    );
    await db.raw(
      'create trigger fail_cart_insert before insert on carts for each row execute function fail_cart_insert()',
    );
    const retryHeaders = ucpHeaders(full);
    const retry = () =>
      protocolFetch(api, '/ucp/checkout-sessions', {
        method: 'POST',
        headers: { ...retryHeaders, 'Request-Id': randomUUID() },
        body,
      });
    try {
      const failed = await retry();
      expect([failed.response.status, failed.body.code]).toEqual([500, 'internal_error']);
    } finally {
      await db.raw('drop trigger fail_cart_insert on carts');
      await db.raw('drop function fail_cart_insert()');
    }
    const succeeded = await retry();
    expect(succeeded.response.status).toBe(201);
    expect(succeeded.response.headers.get('idempotent-replayed')).toBeNull();
    expect(await cartCount(api)).toBe(before + 2);
  });

  it('stores 4xx answers after the claim under the key, and the answer is recorded with the cart in one transaction', async () => {
    const headers = ucpHeaders(full);
    const invalid = await create({ line_items: [] }, headers);
    expect(invalid.response.status).toBe(400);
    const replay = await create({ line_items: [] }, { ...headers, 'Request-Id': randomUUID() });
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    const created = await create({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] });
    const record = await api.service.deps
      .db('protocol_idempotency')
      .where('response_body', 'like', `%${created.body.id}%`)
      .first();
    expect(record).toMatchObject({ state: 'completed', status_code: 201, response_body: created.text });
  });
});

describe('UCP creates in one read and one write', () => {
  const body = json({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] });
  const recordOf = (key: string) =>
    api.service.deps.db('protocol_idempotency').where('key', key).first() as Promise<Record<string, any> | undefined>;

  it('a create that fails stores neither the checkout nor a record for its key', async () => {
    const before = await cartCount(api);
    const headers = ucpHeaders(full);
    const db = api.service.deps.db;
    await db.raw(
      `create function fail_line_insert() returns trigger language plpgsql as $$ begin raise exception 'injected'; end $$`,
    );
    await db.raw(
      'create trigger fail_line_insert before insert on cart_line_items for each row execute function fail_line_insert()',
    );
    try {
      const failed = await create(body, headers);
      expect([failed.response.status, failed.body.code]).toEqual([500, 'internal_error']);
    } finally {
      await db.raw('drop trigger fail_line_insert on cart_line_items');
      await db.raw('drop function fail_line_insert()');
    }
    expect(await cartCount(api)).toBe(before);
    expect(await recordOf(headers['Idempotency-Key']!)).toBeUndefined();
  });

  it('shows the buyer as a read of the stored checkout does, whatever order its fields were sent in', async () => {
    const created = await create({
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
      buyer: { phone_number: '+15550100', last_name: 'Lovelace', email: 'ada@example.com', first_name: 'Ada' },
    });
    expect(created.response.status).toBe(201);
    const read = await protocolFetch(api, `/ucp/checkout-sessions/${created.body.id}`, { headers: ucpHeaders(full) });
    expect(read.text).toBe(created.text);
  });

  it("takes over an expired record of its key; an earlier release's in-flight record is in flight for a minute", async () => {
    const db = api.service.deps.db;
    const headers = ucpHeaders(full);
    const key = headers['Idempotency-Key']!;
    const scope = `ucp|${full}|POST /ucp/checkout-sessions`;
    const record = (created: number, state: 'in_flight' | 'completed') => ({
      scope,
      key,
      // An expired record's request does not matter; an in-flight one is this very request.
      request_hash: state === 'completed' ? 'another request' : jcsHash(JSON.parse(body)),
      state,
      status_code: state === 'completed' ? 201 : null,
      response_body: state === 'completed' ? '{"id":"cart_old"}' : null,
      response_headers: state === 'completed' ? '{}' : null,
      created_at: new Date(created),
      expires_at: new Date(created + 48 * 3600_000),
    });
    await db('protocol_idempotency').insert(record(Date.now() - 49 * 3600_000, 'completed'));
    const afterExpiry = await create(body, headers);
    expect(afterExpiry.response.status).toBe(201);
    expect(afterExpiry.response.headers.get('idempotent-replayed')).toBeNull();
    expect(await recordOf(key)).toMatchObject({ state: 'completed', response_body: afterExpiry.text });

    await db('protocol_idempotency').where({ scope, key }).delete();
    await db('protocol_idempotency').insert(record(Date.now() - 1_000, 'in_flight'));
    const inFlight = await create(body, { ...headers, 'Request-Id': randomUUID() });
    expect([inFlight.response.status, inFlight.body.code]).toEqual([503, 'idempotency_in_flight']);
    await db('protocol_idempotency')
      .where({ scope, key })
      .update({ created_at: new Date(Date.now() - 61_000) });
    const takenOver = await create(body, { ...headers, 'Request-Id': randomUUID() });
    expect(takenOver.response.status).toBe(201);
    expect(takenOver.body.id).not.toBe(afterExpiry.body.id);
    expect(await recordOf(key)).toMatchObject({ state: 'completed', response_body: takenOver.text });
  });

  it.skipIf(!serverUrl)(
    'two instances: concurrent creates under one key store one checkout, and each replays it',
    async () => {
      const other = await startTestService({ env: PROTOCOL_ENV, database: api.database });
      try {
        const before = await cartCount(api);
        const headers = ucpHeaders(full);
        const send = (instance: TestService) =>
          protocolFetch(instance, '/ucp/checkout-sessions', {
            method: 'POST',
            headers: { ...headers, 'Request-Id': randomUUID() },
            body,
          });
        const answers = await Promise.all(Array.from({ length: 8 }, (_, index) => send(index % 2 ? other : api)));
        expect(answers.map((answer) => answer.response.status)).toEqual(Array(8).fill(201));
        expect(new Set(answers.map((answer) => answer.text)).size).toBe(1);
        expect(answers.filter((answer) => !answer.response.headers.get('idempotent-replayed'))).toHaveLength(1);
        expect(await cartCount(api)).toBe(before + 1);
        const [fromA, fromB] = [await send(api), await send(other)];
        expect([fromA.text, fromB.text]).toEqual([answers[0]!.text, answers[0]!.text]);
        expect([fromA, fromB].map((answer) => answer.response.headers.get('idempotent-replayed'))).toEqual([
          'true',
          'true',
        ]);
      } finally {
        await other.close();
      }
    },
  );
});
