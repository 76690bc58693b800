// The ACP 2026-04-17 REST binding over the real service and database: discovery, authentication, version and key
// headers, the session operations in integer minor units, and idempotency. Every body is validated against the OpenAPI
// document and the protocol's own JSON Schema (protocolFetch).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { payWithTestProcessor } from './support/payments.js';
import {
  cartCount,
  PROTOCOL_BASE_URL,
  PROTOCOL_ENV,
  protocolFetch,
  ucpHeaders,
  startProfileServer,
  type ProfileServer,
} from './support/protocols.js';
import { acpTotalsProblems } from '../src/conformance/invariants.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let token: string;
let keyCounter = 0;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
  token = await agentToken(api, 'cart:write');
});
afterAll(async () => {
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const json = (body: unknown) => JSON.stringify(body);
const nextKey = () => `key-${Date.now()}-${keyCounter++}`;

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...bearer(token),
    'API-Version': '2026-04-17',
    'Content-Type': 'application/json',
    'Idempotency-Key': nextKey(),
    ...extra,
  };
}

function post(path: string, body: unknown, extra: Record<string, string> = {}) {
  return protocolFetch(api, path, {
    method: 'POST',
    headers: headers(extra),
    body: typeof body === 'string' ? body : json(body),
  });
}

const create = (body: unknown, extra: Record<string, string> = {}) => post('/acp/checkout_sessions', body, extra);
const BASIC = { line_items: [{ id: TWO_PACK, quantity: 2 }], currency: 'usd', capabilities: {} };

function amounts(totals: Array<{ type: string; amount: number }>): Array<[string, number]> {
  return totals.map((total) => [total.type, total.amount]);
}

/** B.5's invariants. */
function expectConsistent(session: any): void {
  expect(acpTotalsProblems(session)).toEqual([]);
}

describe('ACP discovery and headers', () => {
  it('A-D1: discovery without auth, cacheable for an hour', async () => {
    const { response, body } = await protocolFetch(api, '/.well-known/acp.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(body.api_base_url).toBe(`${PROTOCOL_BASE_URL}/acp`);
    expect(body.protocol.version).toBe('2026-04-17');
    expect(body.capabilities.supported_currencies).toEqual(['usd', 'eur', 'gbp', 'cad', 'jpy']);
  });

  it('A-H1: no token 401 with a challenge; a token without cart:write 403; a valid token works', async () => {
    const none = await protocolFetch(api, '/acp/checkout_sessions', {
      method: 'POST',
      headers: { 'API-Version': '2026-04-17', 'Idempotency-Key': nextKey(), 'Content-Type': 'application/json' },
      body: json(BASIC),
    });
    expect([none.response.status, none.body.code]).toEqual([401, 'unauthorized']);
    expect(none.response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const bad = await create(BASIC, { Authorization: 'Bearer nope' });
    expect([bad.response.status, bad.body.code]).toEqual([401, 'invalid_token']);
    const readOnly = await agentToken(api, 'catalog:read');
    const forbidden = await create(BASIC, bearer(readOnly));
    expect([forbidden.response.status, forbidden.body.code]).toEqual([403, 'insufficient_scope']);
    expect((await create(BASIC)).response.status).toBe(201);
  });

  it('A-H2/A-H3/A-H4: API-Version and Idempotency-Key are required; headers are echoed', async () => {
    const missing = await create(BASIC, { 'API-Version': '' });
    expect(missing.body).toMatchObject({
      type: 'invalid_request',
      code: 'missing_api_version',
      supported_versions: ['2026-04-17'],
    });
    const old = await create(BASIC, { 'API-Version': '2026-01-30' });
    expect([old.response.status, old.body.code, old.body.supported_versions]).toEqual([
      400,
      'unsupported_api_version',
      ['2026-04-17'],
    ]);
    const noKey = await create(BASIC, { 'Idempotency-Key': '' });
    expect([noKey.response.status, noKey.body.code]).toEqual([400, 'idempotency_key_required']);
    const longKey = await create(BASIC, { 'Idempotency-Key': 'k'.repeat(256) });
    expect([longKey.response.status, longKey.body.code]).toEqual([400, 'invalid_idempotency_key']);
    for (const suffix of ['/cart_x', '/cart_x/complete', '/cart_x/cancel']) {
      const answer = await post(`/acp/checkout_sessions${suffix}`, {}, { 'Idempotency-Key': '' });
      expect(answer.body.code).toBe('idempotency_key_required');
    }
    const created = await create(BASIC, { 'Idempotency-Key': 'echo-me', 'Request-Id': 'req-1' });
    expect(created.response.headers.get('idempotency-key')).toBe('echo-me');
    expect(created.response.headers.get('request-id')).toBe('req-1');
    expect(created.response.headers.get('api-version')).toBe('2026-04-17');
    const read = await protocolFetch(api, `/acp/checkout_sessions/${created.body.id}`, {
      headers: { ...bearer(token), 'API-Version': '2026-04-17' },
    });
    expect(read.response.status).toBe(200);
  });
});

describe('ACP sessions', () => {
  it('A-C1/A-C2/A-C6: create with 10OFF in either line form gives the same priced session, with the hand-off', async () => {
    const first = await create({
      ...BASIC,
      discounts: { codes: ['10OFF'] },
      buyer: { email: 'buyer@example.com', first_name: 'Ada' },
    });
    expect(first.response.status).toBe(201);
    const session = first.body;
    expect(session).toMatchObject({
      status: 'requires_escalation',
      currency: 'usd',
      buyer: { email: 'buyer@example.com', first_name: 'Ada' },
    });
    expect(amounts(session.totals)).toEqual([
      ['items_base_amount', 2598],
      ['items_discount', 260],
      ['subtotal', 2338],
      ['fulfillment', 495],
      ['tax', 170],
      ['total', 3003],
    ]);
    expect(amounts(session.line_items[0].totals)).toEqual([
      ['items_base_amount', 2598],
      ['items_discount', 260],
      ['subtotal', 2338],
      ['tax', 170],
      ['total', 2508],
    ]);
    expect(session.discounts.applied[0]).toMatchObject({
      code: '10OFF',
      amount: 260,
      allocations: [{ path: '$.line_items[0]', amount: 260 }],
    });
    expect(session.continue_url).toBe(`${PROTOCOL_BASE_URL}/pay/${session.id}`);
    expect(session.messages[0]).toMatchObject({
      type: 'info',
      resolution: 'requires_buyer_input',
      param: '$.continue_url',
    });
    expect(session.capabilities.payment.handlers[0]).toMatchObject({
      id: 'human_handoff',
      name: 'com.example.shop.human_handoff',
      requires_delegate_payment: false,
    });
    expectConsistent(session);
    const second = (
      await create({
        line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
        currency: 'usd',
        capabilities: {},
        discounts: { codes: ['10OFF'] },
      })
    ).body;
    expect(amounts(second.totals)).toEqual(amounts(session.totals));
  });

  it('A-C4/A-C5: the currency chooses the region; codes are rejected with ACP reasons', async () => {
    const eur = (await create({ ...BASIC, currency: 'eur' })).body;
    expect([eur.currency, eur.line_items[0].unit_amount]).toEqual(['eur', 1199]);
    const jpy = (await create({ ...BASIC, currency: 'jpy', line_items: [{ id: TWO_PACK, quantity: 1 }] })).body;
    expect(jpy.line_items[0].unit_amount).toBe(1900);
    expectConsistent(jpy);
    const chf = await create({ ...BASIC, currency: 'chf' });
    expect([chf.response.status, chf.body.code, chf.body.param]).toEqual([400, 'unsupported_currency', '$.currency']);
    const bad = (await create({ ...BASIC, discounts: { codes: ['NOPE99', 'spring20'] } })).body;
    expect(bad.discounts.rejected).toEqual([
      expect.objectContaining({ code: 'NOPE99', reason: 'discount_code_invalid' }),
      expect.objectContaining({ code: 'spring20', reason: 'discount_code_expired' }),
    ]);
    expect(
      bad.messages
        .filter((message: any) => message.type === 'warning')
        .map((message: any) => [message.param, message.code]),
    ).toEqual([
      ['$.discounts.codes[0]', 'discount_code_invalid'],
      ['$.discounts.codes[1]', 'discount_code_expired'],
    ]);
    expect(bad.totals.map((total: any) => total.type)).not.toContain('items_discount');
  });

  it('A-C7/A-C8: bad items and bad bodies are 400 with code and param, and store nothing', async () => {
    const before = await cartCount(api);
    const cases: Array<[unknown, string, string]> = [
      [{ ...BASIC, line_items: [{ id: 'variant_nope', quantity: 1 }] }, 'item_not_found', '$.line_items[0].id'],
      [
        { ...BASIC, line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }] },
        'item_not_found',
        '$.line_items[0].item.id',
      ],
      [{ line_items: BASIC.line_items, capabilities: {} }, 'missing_field', '$.currency'],
      [{ line_items: BASIC.line_items, currency: 'usd' }, 'missing_field', '$.capabilities'],
      [{ currency: 'usd', capabilities: {} }, 'missing_field', '$.line_items'],
      [{ ...BASIC, color: 'red' }, 'unknown_field', '$.color'],
      [{ items: BASIC.line_items, currency: 'usd', capabilities: {} }, 'unknown_field', '$.items'],
      [{ ...BASIC, discounts: { codes: ['A'] }, coupons: ['B'] }, 'conflicting_fields', '$.coupons'],
    ];
    for (const [body, code, param] of cases) {
      const { response, body: error } = await create(body);
      expect([response.status, error.code, error.param]).toEqual([400, code, param]);
    }
    const stock = await create({
      ...BASIC,
      line_items: [
        { id: TWO_PACK, quantity: 100 },
        { id: 'variant_01tongue1pack', quantity: 1 },
      ],
    });
    expect(stock.response.status).toBe(400);
    expect((await create('{"line_items"')).body.code).toBe('invalid_json');
    const plain = await create('hello', { 'Content-Type': 'text/plain' });
    expect([plain.response.status, plain.body.code]).toEqual([415, 'unsupported_media_type']);
    expect(await cartCount(api)).toBe(before);
  });

  it("A-G1/A-U1/A-U2/A-U3/A-R2: retrieve any surface's session; partial updates; item problems leave it unchanged", async () => {
    const unknown = await protocolFetch(api, '/acp/checkout_sessions/cart_nope', { headers: headers() });
    expect([unknown.response.status, unknown.body.code]).toEqual([404, 'session_not_found']);
    const ucpProfiles: ProfileServer = await startProfileServer();
    const viaUcp = await protocolFetch(api, '/ucp/checkout-sessions', {
      method: 'POST',
      headers: ucpHeaders(ucpProfiles.url('/full.json')),
      body: json({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] }),
    });
    await ucpProfiles.close();
    const asAcp = await protocolFetch(api, `/acp/checkout_sessions/${viaUcp.body.id}`, { headers: headers() });
    expect(asAcp.body).toMatchObject({ id: viaUcp.body.id, status: 'requires_escalation', currency: 'usd' });

    const session = (await create({ ...BASIC, discounts: { codes: ['10OFF'] } })).body;
    const path = `/acp/checkout_sessions/${session.id}`;
    const lineId = session.line_items[0].id;
    const updated = await post(path, { line_items: [{ id: TWO_PACK, quantity: 3 }] });
    expect(updated.body.line_items).toEqual([expect.objectContaining({ id: lineId, quantity: 3 })]);
    expect(updated.body.discounts.codes).toEqual(['10OFF']);
    expectConsistent(updated.body);
    const read = await protocolFetch(api, path, { headers: headers() });
    expect(read.text).toBe(updated.text);
    const cleared = await post(path, { discounts: { codes: [] } });
    expect(cleared.body.discounts).toEqual({ codes: [], applied: [], rejected: [] });
    const nothing = await post(path, {});
    expect({ ...nothing.body, updated_at: undefined }).toEqual({ ...cleared.body, updated_at: undefined });
    const unknownItem = await post(path, { line_items: [{ id: 'variant_nope', quantity: 1 }] });
    expect(unknownItem.response.status).toBe(200);
    expect(unknownItem.body.line_items).toEqual(cleared.body.line_items);
    expect(unknownItem.body.messages).toContainEqual(
      expect.objectContaining({
        type: 'error',
        code: 'not_found',
        resolution: 'recoverable',
        param: '$.line_items[0].id',
      }),
    );
    const express = await post(path, {
      selected_fulfillment_options: [{ type: 'shipping', option_id: 'express', item_ids: [lineId] }],
    });
    expect(express.body.messages).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'invalid', param: '$.selected_fulfillment_options[0]' }),
    );
    expect(express.response.headers.get('cache-control')).toBe('no-store');
  });

  it('A-P1/A-P2/A-X1: complete is 422 and changes nothing; cancel once, then 405; the same key replays', async () => {
    const session = (await create(BASIC)).body;
    const path = `/acp/checkout_sessions/${session.id}`;
    const complete = await post(`${path}/complete`, {
      payment_data: {
        handler_id: 'human_handoff',
        instrument: { type: 'card', credential: { type: 'spt', token: 'tok' } },
      },
    });
    expect(complete.body).toEqual({
      type: 'invalid_request',
      code: 'delegated_payment_not_supported',
      message: expect.any(String),
      param: '$.payment_data',
    });
    expect(complete.response.status).toBe(422);
    expect((await protocolFetch(api, path, { headers: headers() })).body.status).toBe('requires_escalation');
    const noPayment = await post(`${path}/complete`, {});
    expect([noPayment.response.status, noPayment.body.code, noPayment.body.param]).toEqual([
      400,
      'missing_field',
      '$.payment_data',
    ]);

    const key = nextKey();
    const canceled = await post(`${path}/cancel`, {}, { 'Idempotency-Key': key });
    expect(canceled.response.status).toBe(200);
    expect(canceled.body.status).toBe('canceled');
    expect(canceled.body.continue_url).toBeUndefined();
    const replay = await post(`${path}/cancel`, {}, { 'Idempotency-Key': key });
    expect(replay.text).toBe(canceled.text);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    const again = await post(`${path}/cancel`, {});
    expect([again.response.status, again.body.code]).toEqual([405, 'session_already_canceled']);
    const update = await post(path, { discounts: { codes: [] } });
    expect([update.response.status, update.body.code]).toEqual([405, 'session_canceled']);
    const completeCanceled = await post(`${path}/complete`, { payment_data: { purchase_order_number: 'PO-1' } });
    expect([completeCanceled.response.status, completeCanceled.body.code]).toEqual([405, 'session_canceled']);
  });

  it('a session paid on the pay page is completed with its order', async () => {
    const session = (await create(BASIC)).body;
    await payWithTestProcessor(api, session.id);
    const { body } = await protocolFetch(api, `/acp/checkout_sessions/${session.id}`, { headers: headers() });
    expect(body.status).toBe('completed');
    expect(body.order).toMatchObject({
      id: expect.stringMatching(/^order_/),
      checkout_session_id: session.id,
      permalink_url: expect.stringContaining('/orders/'),
    });
    expect(body.continue_url).toBeUndefined();
    const cancel = await post(`/acp/checkout_sessions/${session.id}/cancel`, {});
    expect([cancel.response.status, cancel.body.code]).toEqual([405, 'session_completed']);
  });
});

describe('ACP idempotency', () => {
  it('A-I1/A-I2/A-I3: replays are byte-identical whatever the key order or 1.0 vs 1; another body, or null for absent, is 422', async () => {
    const key = nextKey();
    const first = await create(
      '{"line_items":[{"id":"variant_01tongue2pack","quantity":2}],"currency":"usd","capabilities":{}}',
      { 'Idempotency-Key': key },
    );
    const before = await cartCount(api);
    const replay = await create(
      '{"capabilities":{},"currency":"usd","line_items":[{"quantity":2.0,"id":"variant_01tongue2pack"}]}',
      { 'Idempotency-Key': key },
    );
    expect([replay.response.status, replay.response.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(replay.text).toBe(first.text);
    const other = await create({ ...BASIC, currency: 'eur' }, { 'Idempotency-Key': key });
    expect([other.response.status, other.body.code]).toEqual([422, 'idempotency_conflict']);
    const withNull = await create({ ...BASIC, buyer: null }, { 'Idempotency-Key': key });
    expect(withNull.body.code).toBe('idempotency_conflict');
    expect(await cartCount(api)).toBe(before);
    const otherClient = await agentToken(api, 'cart:write');
    const independent = await create(BASIC, { ...bearer(otherClient), 'Idempotency-Key': key });
    expect(independent.response.headers.get('idempotent-replayed')).toBeNull();
    expect(independent.body.id).not.toBe(first.body.id);
  });

  it('replays a 4xx answer given after the claim with its status', async () => {
    const key = nextKey();
    const first = await create({ ...BASIC, currency: 'chf' }, { 'Idempotency-Key': key });
    const replay = await create({ ...BASIC, currency: 'chf' }, { 'Idempotency-Key': key });
    expect([replay.response.status, replay.response.headers.get('idempotent-replayed'), replay.text]).toEqual([
      400,
      'true',
      first.text,
    ]);
  });
});

describe('ACP creates in one read and one write', () => {
  it('shows the buyer and fulfillment details as a read of the stored session does, whatever order they were sent in', async () => {
    const created = await create({
      ...BASIC,
      buyer: { phone_number: '+15550100', last_name: 'Lovelace', first_name: 'Ada', email: 'ada@example.com' },
      fulfillment_details: {
        phone_number: '+15550100',
        name: 'Ada Lovelace',
        address: {
          postal_code: '94103',
          name: 'Ada Lovelace',
          line_one: '1 Analytical Way',
          city: 'San Francisco',
          state: 'CA',
          country: 'US',
        },
      },
    });
    expect(created.response.status).toBe(201);
    const read = await protocolFetch(api, `/acp/checkout_sessions/${created.body.id}`, {
      headers: { ...bearer(token), 'API-Version': '2026-04-17' },
    });
    expect(read.text).toBe(created.text);
  });

  it('stores an answer that created nothing under its key, and replays it', async () => {
    const before = await cartCount(api);
    const key = nextKey();
    const body = { ...BASIC, currency: 'chf' };
    const refused = await create(body, { 'Idempotency-Key': key });
    expect([refused.response.status, refused.body.code]).toEqual([400, 'unsupported_currency']);
    expect(refused.body.message).toContain('usd, eur, gbp, cad, jpy');
    const replay = await create(body, { 'Idempotency-Key': key });
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(refused.text);
    expect(await cartCount(api)).toBe(before);
  });

  it('concurrent creates under their own keys are each stored with their answer, which each replays', async () => {
    const before = await cartCount(api);
    const keys = Array.from({ length: 12 }, nextKey);
    const answers = await Promise.all(keys.map((key) => create(BASIC, { 'Idempotency-Key': key })));
    expect(answers.map((answer) => answer.response.status)).toEqual(keys.map(() => 201));
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(keys.length);
    expect(await cartCount(api)).toBe(before + keys.length);
    const replays = await Promise.all(keys.map((key) => create(BASIC, { 'Idempotency-Key': key })));
    expect(replays.map((replay) => replay.text)).toEqual(answers.map((answer) => answer.text));
    expect(await cartCount(api)).toBe(before + keys.length);
  });
});
