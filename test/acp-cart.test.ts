// ACP carts (ACP 2026-04-17's schema.cart.json and its cart RFC) over the real service and database: create, get,
// update (full replacement) and cancel under /acp/carts, bearer-authenticated like ACP checkout; the cart is the
// client's agent cart (the same rows /agent/carts reads); `cart_id` on checkout create turns it into the ACP checkout
// session with its id. Every body is validated against the OpenAPI document and ACP's own JSON Schema (protocolFetch:
// Cart for /acp/carts, CheckoutSession for the converted session, Error for every refusal).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { cartCount, PROTOCOL_ENV, protocolFetch } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let token: string;
let otherToken: string;
let keyCounter = 0;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
  token = await agentToken(api, 'cart:write');
  otherToken = await agentToken(api, 'cart:write');
});
afterAll(async () => {
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel'; // 85 in stock
const nextKey = () => `cart-key-${Date.now()}-${keyCounter++}`;

function headers(as = token, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...bearer(as),
    'API-Version': '2026-04-17',
    'Content-Type': 'application/json',
    'Idempotency-Key': nextKey(),
    ...extra,
  };
}

const post = (path: string, body: unknown, as = token, extra: Record<string, string> = {}) =>
  protocolFetch(api, path, { method: 'POST', headers: headers(as, extra), body: JSON.stringify(body) });
const get = (path: string, as = token) => protocolFetch(api, path, { headers: headers(as) });
const createCart = (body: unknown, as = token) => post('/acp/carts', body, as);

/** The stored cart: its row's status and owner, and its lines in order. */
async function stored(id: string) {
  const { db } = api.service.deps;
  const cart = await db('carts').where({ id }).first();
  const lines = await db('cart_line_items').where({ cart_id: id }).orderBy('position').select('variant_id', 'quantity');
  return { status: cart?.status, client_id: cart?.client_id, lines };
}

const amount = (totals: Array<{ type: string; amount: number }>, type: string) =>
  totals.find((total) => total.type === type)?.amount;

describe('ACP carts', () => {
  it('discovery advertises carts beside checkout', async () => {
    const { body } = await protocolFetch(api, '/.well-known/acp.json');
    expect(body.capabilities.services).toEqual(['checkout', 'carts']);
  });

  it('create answers 201 with an ACP Cart priced in integer minor units, stored as the client’s open agent cart', async () => {
    const created = await createCart({
      line_items: [
        { id: TWO_PACK, quantity: 2 },
        { item: { id: TRAVEL }, quantity: 1 },
      ],
      buyer: { email: 'buyer@example.com', first_name: 'Ada' },
      locale: 'en-US',
    });
    expect(created.response.status).toBe(201);
    const cart = created.body;
    expect(cart.id).toMatch(/^cart_/);
    expect(cart.currency).toBe('usd');
    expect(cart.buyer).toEqual({ email: 'buyer@example.com', first_name: 'Ada' });
    expect(cart.line_items.map((line: any) => [line.item.id, line.quantity, line.item.unit_amount])).toEqual([
      [TWO_PACK, 2, 1299],
      [TRAVEL, 1, expect.any(Number)],
    ]);
    // No status, payment or continue_url: a cart is not a session.
    expect(Object.keys(cart).sort()).toEqual(['buyer', 'currency', 'id', 'line_items', 'totals']);
    const base = 2 * 1299 + cart.line_items[1].item.unit_amount;
    expect(amount(cart.totals, 'items_base_amount')).toBe(base);
    const nonTotal = cart.totals.filter((total: any) => total.type !== 'total' && total.type !== 'items_base_amount');
    expect(nonTotal.reduce((sum: number, total: any) => sum + total.amount, 0)).toBe(amount(cart.totals, 'total'));
    expect(await stored(cart.id)).toMatchObject({
      status: 'open',
      client_id: expect.any(String),
      lines: [
        { variant_id: TWO_PACK, quantity: 2 },
        { variant_id: TRAVEL, quantity: 1 },
      ],
    });
    // The same cart as the agent API's: /agent/carts reads it for the same client.
    const agent = await api.http(`/agent/carts/${cart.id}`, { headers: bearer(token) });
    expect(agent.status).toBe(200);
    const agentCart = (await agent.json()) as any;
    expect(agentCart.line_items.map((line: any) => line.item.quantity)).toEqual([2, 1]);

    const got = await get(`/acp/carts/${cart.id}`);
    expect([got.response.status, got.body]).toEqual([200, cart]);
  });

  it('update replaces every line (a variant kept keeps its line id) and the buyer; the stored cart follows', async () => {
    const cart = (
      await createCart({
        line_items: [
          { id: TWO_PACK, quantity: 1 },
          { id: TRAVEL, quantity: 1 },
        ],
      })
    ).body;
    const updated = await post(`/acp/carts/${cart.id}`, {
      line_items: [{ id: TWO_PACK, quantity: 3 }],
      buyer: { email: 'later@example.com' },
    });
    expect(updated.response.status).toBe(200);
    expect(updated.body.line_items.map((line: any) => [line.id, line.item.id, line.quantity])).toEqual([
      [cart.line_items[0].id, TWO_PACK, 3],
    ]);
    expect(updated.body.buyer).toEqual({ email: 'later@example.com' });
    expect(amount(updated.body.totals, 'items_base_amount')).toBe(3 * 1299);
    expect((await stored(cart.id)).lines).toEqual([{ variant_id: TWO_PACK, quantity: 3 }]);
  });

  it('bad items and bad bodies are 400 in ACP’s Error shape, and change nothing stored', async () => {
    const before = await cartCount(api);
    const unknown = await createCart({ line_items: [{ id: 'variant_nope', quantity: 1 }] });
    expect([unknown.response.status, unknown.body.type, unknown.body.code, unknown.body.param]).toEqual([
      400,
      'invalid_request',
      'item_not_found',
      '$.line_items[0].id',
    ]);
    const tooMany = await createCart({ line_items: [{ id: TRAVEL, quantity: 86 }] });
    expect([tooMany.response.status, tooMany.body.code]).toEqual([400, 'out_of_stock']);
    const extra = await createCart({ line_items: [{ id: TWO_PACK, quantity: 1 }], currency: 'usd' });
    expect([extra.response.status, extra.body.code, extra.body.param]).toEqual([400, 'unknown_field', '$.currency']);
    const empty = await createCart({ line_items: [] });
    expect([empty.response.status, empty.body.code]).toEqual([400, 'invalid_field']);
    expect(await cartCount(api)).toBe(before);

    const cart = (await createCart({ line_items: [{ id: TWO_PACK, quantity: 1 }] })).body;
    const refused = await post(`/acp/carts/${cart.id}`, { line_items: [{ id: 'variant_nope', quantity: 1 }] });
    expect([refused.response.status, refused.body.code]).toEqual([400, 'item_not_found']);
    expect((await stored(cart.id)).lines).toEqual([{ variant_id: TWO_PACK, quantity: 1 }]);
  });

  it('needs a bearer token with cart:write, and a client sees only its own carts', async () => {
    const cart = (await createCart({ line_items: [{ id: TWO_PACK, quantity: 1 }] })).body;
    const anonymous = await protocolFetch(api, `/acp/carts/${cart.id}`, { headers: { 'API-Version': '2026-04-17' } });
    expect([anonymous.response.status, anonymous.body.code]).toEqual([401, 'unauthorized']);
    expect(anonymous.response.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const other = await get(`/acp/carts/${cart.id}`, otherToken);
    expect([other.response.status, other.body.code]).toEqual([404, 'cart_not_found']);
    const otherUpdate = await post(`/acp/carts/${cart.id}`, { line_items: [{ id: TRAVEL, quantity: 1 }] }, otherToken);
    expect(otherUpdate.response.status).toBe(404);
    expect((await stored(cart.id)).lines).toEqual([{ variant_id: TWO_PACK, quantity: 1 }]);
    // An id no cart can have (a NUL) is a 404 like any other unknown id, never a database error.
    for (const answer of [await get('/acp/carts/%00'), await post('/acp/carts/%00/cancel', {})])
      expect([answer.response.status, answer.body.code]).toEqual([404, 'cart_not_found']);
    const badCartId = await post('/acp/checkout_sessions', {
      cart_id: 'cart_\u0000',
      line_items: [],
      currency: 'usd',
      capabilities: {},
    });
    expect([badCartId.response.status, badCartId.body.param]).toEqual([400, '$.cart_id']);
    const unversioned = await protocolFetch(api, `/acp/carts/${cart.id}`, { headers: bearer(token) });
    expect([unversioned.response.status, unversioned.body.code]).toEqual([400, 'missing_api_version']);
  });

  it('cancel answers the cart as it was; afterwards it is 404 and stored as canceled; a key replays its answer', async () => {
    const cart = (await createCart({ line_items: [{ id: TWO_PACK, quantity: 2 }] })).body;
    const key = nextKey();
    const canceled = await post(`/acp/carts/${cart.id}/cancel`, {}, token, { 'Idempotency-Key': key });
    expect([canceled.response.status, canceled.body]).toEqual([200, cart]);
    expect((await stored(cart.id)).status).toBe('canceled');
    const replay = await post(`/acp/carts/${cart.id}/cancel`, {}, token, { 'Idempotency-Key': key });
    expect([replay.response.status, replay.response.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(replay.body).toEqual(cart);
    const again = await post(`/acp/carts/${cart.id}/cancel`, {});
    expect([again.response.status, again.body.code]).toEqual([404, 'cart_not_found']);
    expect((await get(`/acp/carts/${cart.id}`)).response.status).toBe(404);
    const withBody = await post(`/acp/carts/${cart.id}/cancel`, { reason: 'x' });
    expect([withBody.response.status, withBody.body.code]).toEqual([400, 'unknown_field']);
  });

  it('a create replayed with its key answers the same cart and stores one', async () => {
    const before = await cartCount(api);
    const key = nextKey();
    const body = { line_items: [{ id: TWO_PACK, quantity: 1 }] };
    const first = await post('/acp/carts', body, token, { 'Idempotency-Key': key });
    const second = await post('/acp/carts', body, token, { 'Idempotency-Key': key });
    expect(second.body).toEqual(first.body);
    expect(second.response.headers.get('idempotent-replayed')).toBe('true');
    expect(await cartCount(api)).toBe(before + 1);
    const conflict = await post('/acp/carts', { line_items: [{ id: TWO_PACK, quantity: 2 }] }, token, {
      'Idempotency-Key': key,
    });
    expect([conflict.response.status, conflict.body.code]).toEqual([422, 'idempotency_conflict']);
  });
});

describe('ACP cart to checkout (cart_id on checkout create)', () => {
  const fromCart = (cartId: string, extra: Record<string, unknown> = {}) =>
    post('/acp/checkout_sessions', { cart_id: cartId, line_items: [], currency: 'usd', capabilities: {}, ...extra });

  it('the cart becomes the checkout session with its id, lines and buyer; again answers that session', async () => {
    const cart = (
      await createCart({ line_items: [{ id: TWO_PACK, quantity: 2 }], buyer: { email: 'buyer@example.com' } })
    ).body;
    const before = await cartCount(api);
    // The body's line_items and buyer are ignored when cart_id is present (the RFC).
    const converted = await fromCart(cart.id, {
      line_items: [{ id: TRAVEL, quantity: 5 }],
      buyer: { email: 'ignored@example.com' },
    });
    expect(converted.response.status).toBe(201);
    const session = converted.body;
    expect([session.id, session.status, session.currency]).toEqual([cart.id, 'requires_escalation', 'usd']);
    expect(session.line_items.map((line: any) => [line.id, line.item.id, line.quantity])).toEqual(
      cart.line_items.map((line: any) => [line.id, line.item.id, line.quantity]),
    );
    expect(session.buyer.email).toBe('buyer@example.com');
    expect(session.continue_url).toMatch(new RegExp(`/pay/${cart.id}$`));
    expect(await stored(cart.id)).toMatchObject({ status: 'ready_for_payment' });
    expect(await cartCount(api)).toBe(before);

    const again = await fromCart(cart.id);
    expect([again.response.status, again.body.id, again.body.status]).toEqual([201, cart.id, 'requires_escalation']);
    expect(await cartCount(api)).toBe(before);
    // The session is an ordinary ACP session; as a cart it is gone.
    const read = await get(`/acp/checkout_sessions/${cart.id}`);
    expect([read.response.status, read.body.line_items[0].quantity]).toEqual([200, 2]);
    expect((await get(`/acp/carts/${cart.id}`)).response.status).toBe(404);
  });

  it('an unknown, another client’s or cancelled cart is 404; another currency or an empty cart is 400; nothing changes', async () => {
    expect((await fromCart('cart_nope')).body).toMatchObject({ code: 'cart_not_found', param: '$.cart_id' });
    const cart = (await createCart({ line_items: [{ id: TWO_PACK, quantity: 1 }] })).body;
    const other = await post(
      '/acp/checkout_sessions',
      { cart_id: cart.id, line_items: [], currency: 'usd', capabilities: {} },
      otherToken,
    );
    expect([other.response.status, other.body.code]).toEqual([404, 'cart_not_found']);
    const euro = await fromCart(cart.id, { currency: 'eur' });
    expect([euro.response.status, euro.body.code, euro.body.param]).toEqual([400, 'currency_mismatch', '$.currency']);
    const missing = await post('/acp/checkout_sessions', { cart_id: cart.id, line_items: [], capabilities: {} });
    expect([missing.response.status, missing.body.code, missing.body.param]).toEqual([
      400,
      'missing_field',
      '$.currency',
    ]);
    expect((await stored(cart.id)).status).toBe('open');
    await post(`/acp/carts/${cart.id}/cancel`, {});
    const canceled = await fromCart(cart.id);
    expect([canceled.response.status, canceled.body.code]).toEqual([404, 'cart_not_found']);
    expect((await stored(cart.id)).status).toBe('canceled');
  });

  it('an agent cart emptied through /agent/carts cannot become a session (400 cart_empty)', async () => {
    const cart = (await createCart({ line_items: [{ id: TWO_PACK, quantity: 1 }] })).body;
    const removed = await api.http(`/agent/carts/${cart.id}/line-items/${cart.line_items[0].id}`, {
      method: 'DELETE',
      headers: bearer(token),
    });
    expect(removed.status).toBe(200);
    const empty = await fromCart(cart.id);
    expect([empty.response.status, empty.body.code]).toEqual([400, 'cart_empty']);
    expect((await stored(cart.id)).status).toBe('open');
  });
});
