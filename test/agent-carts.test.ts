// The /agent cart API over real HTTP with cart:write tokens: carts priced exactly like the public checkout, line items
// added, merged, changed and removed, the turn into a checkout session, ownership, scope, and failed changes that
// leave nothing behind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { statementsDuring } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel'; // 85 in stock
const TRAVEL_SKU = 'TS-316L-2PK-TC';

let api: TestService;
let token: string; // client A
let otherToken: string; // client B, also cart:write
let readOnlyToken: string; // catalog:read only
beforeAll(async () => {
  api = await startTestService({ env: { BASE_URL: 'https://store.example' } });
  [token, otherToken, readOnlyToken] = await Promise.all([
    agentToken(api, 'catalog:read cart:write'),
    agentToken(api, 'cart:write'),
    agentToken(api, 'catalog:read'),
  ]);
});
afterAll(async () => {
  await api?.close();
});

interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** A request to the service as client A (or `as`), with a JSON body unless the body is given as raw text. */
async function call(
  method: string,
  path: string,
  options: { body?: unknown; as?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const { body, as = token } = options;
  const headers: Record<string, string> = { ...(as === null ? {} : bearer(as)) };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await api.http(path, {
    method,
    headers: { ...headers, ...options.headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function createCart(body: unknown, as?: string): Promise<any> {
  const created = await call('POST', '/agent/carts', { body, as });
  expect(created.status).toBe(201);
  return created.body;
}

const getCart = (id: string, as?: string) => call('GET', `/agent/carts/${id}`, { as });
const addLine = (id: string, body: unknown, as?: string) => call('POST', `/agent/carts/${id}/line-items`, { body, as });
const patchLine = (id: string, lineId: string, body: unknown, as?: string) =>
  call('PATCH', `/agent/carts/${id}/line-items/${lineId}`, { body, as });
const deleteLine = (id: string, lineId: string, as?: string) =>
  call('DELETE', `/agent/carts/${id}/line-items/${lineId}`, { as });
const checkOut = (id: string, as?: string) => call('POST', `/agent/carts/${id}/checkout-session`, { as });

/** What the public checkout quotes for the same body. */
async function publicQuote(body: unknown): Promise<any> {
  const quoted = await call('POST', '/checkout_sessions', { body, as: null });
  expect(quoted.status).toBe(201);
  return quoted.body;
}

/** The priced content of a cart or session: everything but ids, status and the payment hand-off. */
function pricing(cartOrSession: any) {
  const { currency, region_id, totals, promo_codes, messages, line_items } = cartOrSession;
  return {
    currency,
    region_id,
    totals,
    promo_codes,
    messages,
    line_items: line_items.map(({ id: _id, ...line }: { id: string }) => line),
  };
}

/** Everything stored about a cart: its row and its lines. A failed change must leave both exactly as they were. */
async function stored(id: string) {
  const { db } = api.service.deps;
  return {
    cart: await db('carts').where({ id }).first(),
    lines: await db('cart_line_items').where({ cart_id: id }).orderBy('position'),
  };
}

const cartCount = async () => Number((await api.service.deps.db('carts').count({ n: '*' }))[0]!.n);
const lineQuantities = (cart: any) => cart.line_items.map((line: any) => [line.item.id, line.item.quantity]);

describe('POST /agent/carts', () => {
  it('creates an open cart owned by the client, priced exactly as the public checkout quotes the same items', async () => {
    const body = { items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }], promo_codes: ['10off'] };
    const created = await call('POST', '/agent/carts', { body });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({
      object: 'cart',
      status: 'open',
      currency: 'usd',
      region_id: 'reg_us',
      promo_codes: ['10OFF'],
      messages: [],
    });
    expect(created.body.id).toMatch(/^cart_/);
    expect(created.body.line_items.map((line: any) => line.id)).toEqual([
      expect.stringMatching(/^cali_/),
      expect.stringMatching(/^cali_/),
    ]);
    expect(pricing(created.body)).toEqual(pricing(await publicQuote(body)));
    expect(created.body.totals.total).toEqual({ amount: 44.37, currency: 'usd' });
    const row = await api.service.deps.db('carts').where({ id: created.body.id }).first();
    expect(row).toMatchObject({ status: 'open', client_id: expect.stringMatching(/.+/) });
  });

  it('sends 2 statements, as a checkout session create does: one read (region, variants, promotions) and the insert', async () => {
    const tables = ['regions', 'variants', 'variant_prices', 'promotions', 'carts', 'cart_line_items'];
    const statements = await statementsDuring(api.service.deps.db, tables, async () => {
      const cart = await createCart({ items: [{ id: TWO_PACK }, { sku: TRAVEL_SKU }], promo_codes: ['10off'] });
      expect(cart.promo_codes).toEqual(['10OFF']);
    });
    expect(statements).toBe(2);
  });

  it.each([
    [
      'every identifier, merged per variant',
      {
        items: [
          { variant_id: TWO_PACK },
          { handle: 'tongue-scraper-2-pack', quantity: 2 },
          { sku: TRAVEL_SKU },
          { id: 'tongue-scraper-2-pack-travel-cases', quantity: 3 },
        ],
      },
    ],
    ['a region with its currency, tax and shipping', { items: [{ id: TWO_PACK }], region_id: 'reg_eu' }],
    [
      'a currency without minor units and a promo alias',
      { items: [{ id: TRAVEL, quantity: 2 }], region_id: 'reg_jp', coupon_code: '10OFF' },
    ],
    [
      'codes that do not apply, reported in messages',
      { items: [{ id: TWO_PACK }], coupon_code: 'SPRING20', discount_codes: ['nope', '10OFF', 'launch50', '10off'] },
    ],
    ['a fixed code with a minimum subtotal', { items: [{ id: TRAVEL, quantity: 2 }], promo_code: 'WELCOME5' }],
  ])('totals equal the public checkout quote for %s', async (_what, body) => {
    expect(pricing(await createCart(body))).toEqual(pricing(await publicQuote(body)));
  });

  it('is not a checkout session until it is turned into one', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    const session = await call('GET', `/checkout_sessions/${cart.id}`, { as: null });
    expect([session.status, session.body.code]).toEqual([404, 'session_not_found']);
  });

  it.each([
    ['a missing items list', {}, 'items'],
    ['an empty items list', { items: [] }, 'items'],
    ['a zero quantity', { items: [{ id: TWO_PACK, quantity: 0 }] }, 'items[0].quantity'],
    ['a quantity over 100', { items: [{ id: TWO_PACK, quantity: 101 }] }, 'items[0].quantity'],
    ['a fractional quantity', { items: [{ id: TWO_PACK, quantity: 1.5 }] }, 'items[0].quantity'],
    ['a quantity as a string', { items: [{ id: TWO_PACK, quantity: '2' }] }, 'items[0].quantity'],
    ['an unknown variant', { items: [{ id: 'variant_nope' }] }, 'items[0].id'],
    ['an unknown handle', { items: [{ id: TWO_PACK }, { handle: 'spoon' }] }, 'items[1].handle'],
    ['an unknown SKU', { items: [{ sku: 'NOPE' }] }, 'items[0].sku'],
    ['an item without identifier', { items: [{ quantity: 2 }] }, 'items[0].id'],
    ['an item with two identifiers', { items: [{ id: TWO_PACK, sku: 'TS-316L-2PK' }] }, 'items[0]'],
    ['an unknown item field', { items: [{ id: TWO_PACK, qty: 2 }] }, 'items[0].qty'],
    ['an unknown region', { items: [{ id: TWO_PACK }], region_id: 'reg_mars' }, 'region_id'],
    ['more than the stock', { items: [{ id: TRAVEL, quantity: 86 }] }, 'items[0].quantity'],
    [
      'merged lines over 100',
      {
        items: [
          { id: TWO_PACK, quantity: 60 },
          { sku: 'TS-316L-2PK', quantity: 41 },
        ],
      },
      'items[0].quantity',
    ],
    ['a JSON array body', [{ id: TWO_PACK }], 'body'],
    ['malformed JSON', '{"items": [', 'body'],
  ])('rejects %s with 400 invalid_request naming the field, and stores nothing', async (_what, body, param) => {
    const before = await cartCount();
    const { status, body: error } = await call('POST', '/agent/carts', { body });
    expect(status).toBe(400);
    expect(error).toMatchObject({ error: 'invalid_request', param });
    expect(error.error_description.length).toBeGreaterThan(10);
    expect(await cartCount()).toBe(before);
  });

  it('says how many are in stock', async () => {
    const { body } = await call('POST', '/agent/carts', { body: { items: [{ id: TRAVEL, quantity: 86 }] } });
    expect(body).toMatchObject({ available: 85, error_description: expect.stringContaining('Only 85') });
  });

  it('rejects a body that is not JSON', async () => {
    const { status, body } = await call('POST', '/agent/carts', {
      body: JSON.stringify({ items: [{ id: TWO_PACK }] }),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: 'invalid_request', param: 'Content-Type' });
  });
});

describe('GET /agent/carts/{id}', () => {
  it('answers the cart as created', async () => {
    const cart = await createCart({
      items: [{ id: TRAVEL, quantity: 2 }],
      region_id: 'reg_gb',
      promo_codes: ['10OFF'],
    });
    const read = await getCart(cart.id);
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect(read.body).toEqual(cart);
  });

  it('re-prices live from current prices', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    const prices = () => api.service.deps.db('variant_prices').where({ variant_id: TWO_PACK, region_id: 'reg_us' });
    await prices().update({ amount: 1499 });
    try {
      const { body } = await getCart(cart.id);
      expect(body.line_items[0].base_amount).toBe(14.99);
      expect(body.totals.subtotal.amount).toBe(14.99);
    } finally {
      await prices().update({ amount: 1299 });
    }
  });

  it("answers 404 not_found for an unknown id, another client's cart and a public checkout session alike", async () => {
    const mine = await createCart({ items: [{ id: TWO_PACK }] });
    const session = await publicQuote({ items: [{ id: TWO_PACK }] });
    for (const [id, as] of [
      ['cart_doesnotexist', token],
      [mine.id, otherToken],
      [session.id, token],
    ] as const) {
      const { status, body } = await getCart(id, as);
      expect(status).toBe(404);
      expect(body).toEqual({ error: 'not_found', error_description: expect.stringContaining(id), param: 'id' });
    }
  });

  it('answers 400 invalid_request to a malformed id', async () => {
    const { status, body } = await getCart('cart%20x');
    expect([status, body.error, body.param]).toEqual([400, 'invalid_request', 'id']);
  });
});

describe('POST /agent/carts/{id}/line-items', () => {
  it('adds a new variant as a new last line, re-priced like the public checkout', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }], promo_codes: ['10OFF'] });
    const added = await addLine(cart.id, { handle: 'tongue-scraper-2-pack-travel-cases', quantity: 2 });
    expect(added.status).toBe(200);
    expect(added.body.line_items[0].id).toBe(cart.line_items[0].id);
    expect(lineQuantities(added.body)).toEqual([
      [TWO_PACK, 1],
      [TRAVEL, 2],
    ]);
    expect(pricing(added.body)).toEqual(
      pricing(await publicQuote({ items: [{ id: TWO_PACK }, { id: TRAVEL, quantity: 2 }], promo_codes: ['10OFF'] })),
    );
    expect((await getCart(cart.id)).body).toEqual(added.body);
  });

  it('adds to the quantity of a variant the cart holds (any identifier), without a second line; quantity defaults to 1', async () => {
    const cart = await createCart({ items: [{ id: TRAVEL, quantity: 3 }] });
    const bySku = await addLine(cart.id, { sku: TRAVEL_SKU, quantity: 4 });
    expect(lineQuantities(bySku.body)).toEqual([[TRAVEL, 7]]);
    expect(bySku.body.line_items[0].id).toBe(cart.line_items[0].id);
    const byDefault = await addLine(cart.id, { variant_id: TRAVEL });
    expect(lineQuantities(byDefault.body)).toEqual([[TRAVEL, 8]]);
  });

  it.each([
    ['the merged quantity over the stock', { id: TRAVEL, quantity: 6 }, 'quantity', 85],
    ['the merged quantity over 100', { id: TWO_PACK, quantity: 41 }, 'quantity', undefined],
    ['an unknown variant', { id: 'variant_nope' }, 'id', undefined],
    ['an unknown SKU', { sku: 'NOPE', quantity: 1 }, 'sku', undefined],
    ['no identifier', { quantity: 1 }, 'id', undefined],
    ['two identifiers', { id: TWO_PACK, handle: 'tongue-scraper-2-pack' }, 'body', undefined],
    ['a zero quantity', { id: TWO_PACK, quantity: 0 }, 'quantity', undefined],
    ['a quantity over 100', { id: TWO_PACK, quantity: 101 }, 'quantity', undefined],
    ['an unknown field', { id: TWO_PACK, qty: 1 }, 'qty', undefined],
    ['an items list instead of one item', { items: [{ id: TWO_PACK }] }, 'items', undefined],
    ['malformed JSON', '{"id": ', 'body', undefined],
  ])(
    'rejects %s with 400 invalid_request naming the field, and changes nothing',
    async (_what, body, param, available) => {
      const cart = await createCart({
        items: [
          { id: TRAVEL, quantity: 80 },
          { id: TWO_PACK, quantity: 60 },
        ],
      });
      const before = await stored(cart.id);
      const { status, body: error } = await addLine(cart.id, body);
      expect(status).toBe(400);
      expect(error).toMatchObject({ error: 'invalid_request', param });
      expect(error.available).toBe(available);
      expect(await stored(cart.id)).toEqual(before);
      expect((await getCart(cart.id)).body).toEqual(cart);
    },
  );

  it('rejects a body that is not JSON, and changes nothing', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    const before = await stored(cart.id);
    const { status, body } = await call('POST', `/agent/carts/${cart.id}/line-items`, {
      body: `id=${TWO_PACK}`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect([status, body.error, body.param]).toEqual([400, 'invalid_request', 'Content-Type']);
    expect(await stored(cart.id)).toEqual(before);
  });

  it("answers 404 for another client's cart and leaves it unchanged", async () => {
    const theirs = await createCart({ items: [{ id: TWO_PACK }] }, otherToken);
    const before = await stored(theirs.id);
    const { status, body } = await addLine(theirs.id, { id: TRAVEL });
    expect([status, body.error, body.param]).toEqual([404, 'not_found', 'id']);
    expect(await stored(theirs.id)).toEqual(before);
    expect((await addLine('cart_doesnotexist', { id: TRAVEL })).status).toBe(404);
  });

  it('lets exactly one of two concurrent adds through when together they would exceed the stock', async () => {
    const cart = await createCart({ items: [{ id: TRAVEL, quantity: 1 }] });
    const answers = await Promise.all([
      addLine(cart.id, { id: TRAVEL, quantity: 50 }),
      addLine(cart.id, { id: TRAVEL, quantity: 50 }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    expect(lineQuantities((await getCart(cart.id)).body)).toEqual([[TRAVEL, 51]]);
  });
});

describe('PATCH /agent/carts/{id}/line-items/{line_id}', () => {
  it('sets the quantity (not an increment) and re-prices', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK, quantity: 5 }, { id: TRAVEL }] });
    const patched = await patchLine(cart.id, cart.line_items[0].id, { quantity: 2 });
    expect(patched.status).toBe(200);
    expect(lineQuantities(patched.body)).toEqual([
      [TWO_PACK, 2],
      [TRAVEL, 1],
    ]);
    expect(pricing(patched.body)).toEqual(
      pricing(await publicQuote({ items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }] })),
    );
  });

  it.each([
    ['more than the stock', { quantity: 86 }, 'quantity', 85],
    ['a zero quantity', { quantity: 0 }, 'quantity', undefined],
    ['a quantity over 100', { quantity: 101 }, 'quantity', undefined],
    ['a quantity as a string', { quantity: '2' }, 'quantity', undefined],
    ['no quantity', {}, 'quantity', undefined],
    ['an unknown field', { quantity: 2, id: TRAVEL }, 'id', undefined],
    ['malformed JSON', '{"quantity":', 'body', undefined],
  ])(
    'rejects %s with 400 invalid_request naming the field, and changes nothing',
    async (_what, body, param, available) => {
      const cart = await createCart({ items: [{ id: TRAVEL, quantity: 2 }] });
      const before = await stored(cart.id);
      const { status, body: error } = await patchLine(cart.id, cart.line_items[0].id, body);
      expect(status).toBe(400);
      expect(error).toMatchObject({ error: 'invalid_request', param });
      expect(error.available).toBe(available);
      expect(await stored(cart.id)).toEqual(before);
    },
  );

  it("answers 404 naming line_id for an unknown line or another cart's line, and 404 naming id for another client's cart", async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    const sibling = await createCart({ items: [{ id: TWO_PACK }] });
    for (const lineId of ['cali_doesnotexist', sibling.line_items[0].id]) {
      const { status, body } = await patchLine(cart.id, lineId, { quantity: 2 });
      expect(status).toBe(404);
      expect(body).toEqual({
        error: 'not_found',
        error_description: expect.stringContaining(lineId),
        param: 'line_id',
      });
    }
    const theirs = await patchLine(cart.id, cart.line_items[0].id, { quantity: 2 }, otherToken);
    expect([theirs.status, theirs.body.param]).toEqual([404, 'id']);
    expect((await getCart(cart.id)).body).toEqual(cart);
  });
});

describe('DELETE /agent/carts/{id}/line-items/{line_id}', () => {
  it('removes a line and re-prices; removing the last leaves an open cart with no lines and zero totals', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }, { id: TRAVEL }], promo_codes: ['10OFF'] });
    const [first, second] = cart.line_items;
    const one = await deleteLine(cart.id, first.id);
    expect(one.status).toBe(200);
    expect(lineQuantities(one.body)).toEqual([[TRAVEL, 1]]);
    expect(pricing(one.body)).toEqual(pricing(await publicQuote({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] })));

    const none = await deleteLine(cart.id, second.id);
    expect(none.status).toBe(200);
    const zero = { amount: 0, currency: 'usd' };
    expect(none.body).toMatchObject({
      status: 'open',
      line_items: [],
      totals: { subtotal: zero, discount: zero, shipping: zero, tax: zero, total: zero },
    });

    const refilled = await addLine(cart.id, { id: TWO_PACK });
    expect(lineQuantities(refilled.body)).toEqual([[TWO_PACK, 1]]);
  });

  it('answers 404 for an unknown or already removed line, and changes nothing', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }, { id: TRAVEL }] });
    await deleteLine(cart.id, cart.line_items[0].id);
    const before = await stored(cart.id);
    for (const lineId of [cart.line_items[0].id, 'cali_doesnotexist']) {
      const { status, body } = await deleteLine(cart.id, lineId);
      expect([status, body.error, body.param]).toEqual([404, 'not_found', 'line_id']);
    }
    expect((await deleteLine(cart.id, cart.line_items[1].id, otherToken)).status).toBe(404);
    expect(await stored(cart.id)).toEqual(before);
  });
});

describe('POST /agent/carts/{id}/checkout-session', () => {
  it('turns the cart into the checkout session with its id, exactly as GET /checkout_sessions/{id} returns it', async () => {
    const body = { items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }], promo_codes: ['10OFF', 'nope'] };
    const cart = await createCart(body);
    const created = await checkOut(cart.id);
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body).toMatchObject({ id: cart.id, object: 'checkout_session', status: 'ready_for_payment' });
    expect(created.body.payment_provider).toMatchObject({
      provider: 'human_handoff',
      checkout_url: `https://store.example/pay/${cart.id}`,
    });
    expect(created.body.line_items.map((line: any) => line.id)).toEqual(cart.line_items.map((line: any) => line.id));
    expect(created.body).toEqual((await call('GET', `/checkout_sessions/${cart.id}`, { as: null })).body);
    expect(pricing(created.body)).toEqual(pricing(cart));
    expect(pricing(created.body)).toEqual(pricing(await publicQuote(body)));
    expect((await getCart(cart.id)).body).toEqual({ ...cart, status: 'ready_for_payment' });
  });

  it('is idempotent: a repeat answers 200 with the same session and changes nothing', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    const first = await checkOut(cart.id);
    const before = await stored(cart.id);
    const again = await checkOut(cart.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await stored(cart.id)).toEqual(before);
  });

  it('freezes the cart: every change answers 409 cart_not_open and changes nothing', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }, { id: TRAVEL }] });
    await checkOut(cart.id);
    const before = await stored(cart.id);
    const lineId = cart.line_items[0].id;
    for (const answer of [
      await addLine(cart.id, { id: TWO_PACK }),
      await patchLine(cart.id, lineId, { quantity: 3 }),
      await deleteLine(cart.id, lineId),
    ]) {
      expect(answer.status).toBe(409);
      expect(answer.body).toEqual({
        error: 'cart_not_open',
        error_description: expect.stringContaining('checkout session'),
      });
    }
    expect(await stored(cart.id)).toEqual(before);
  });

  it('after the session is cancelled, shows the cart canceled and refuses to turn it again (409 cart_not_open)', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    await checkOut(cart.id);
    expect((await call('POST', `/checkout_sessions/${cart.id}/cancel`, { as: null })).status).toBe(200);
    expect((await getCart(cart.id)).body.status).toBe('canceled');
    const again = await checkOut(cart.id);
    expect([again.status, again.body.error]).toEqual([409, 'cart_not_open']);
    expect(again.body.error_description).toContain('cancelled');
    expect((await addLine(cart.id, { id: TWO_PACK })).status).toBe(409);
  });

  it('refuses an empty cart with 409 cart_empty, leaving it open', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    await deleteLine(cart.id, cart.line_items[0].id);
    const { status, body } = await checkOut(cart.id);
    expect([status, body.error]).toEqual([409, 'cart_empty']);
    expect((await getCart(cart.id)).body.status).toBe('open');
  });

  it('checks every line again: stock that fell below a line is 409 line_item_unavailable naming it, and the cart stays open', async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }, { id: TRAVEL, quantity: 5 }] });
    const stock = () => api.service.deps.db('variants').where({ id: TRAVEL });
    await stock().update({ inventory_quantity: 3 });
    try {
      const before = await stored(cart.id);
      const { status, body } = await checkOut(cart.id);
      expect(status).toBe(409);
      expect(body).toMatchObject({ error: 'line_item_unavailable', param: 'line_items[1].quantity', available: 3 });
      expect(body.error_description).toContain(cart.line_items[1].id);
      expect(await stored(cart.id)).toEqual(before);
      await patchLine(cart.id, cart.line_items[1].id, { quantity: 3 });
      expect((await checkOut(cart.id)).status).toBe(201);
    } finally {
      await stock().update({ inventory_quantity: 85 });
    }
  });

  it("answers 404 for another client's cart and an unknown id, and changes nothing", async () => {
    const cart = await createCart({ items: [{ id: TWO_PACK }] });
    const theirs = await checkOut(cart.id, otherToken);
    expect([theirs.status, theirs.body.error, theirs.body.param]).toEqual([404, 'not_found', 'id']);
    expect((await checkOut('cart_doesnotexist')).status).toBe(404);
    expect((await getCart(cart.id)).body.status).toBe('open');
  });
});

describe('authentication and scope', () => {
  let cart: any;
  beforeAll(async () => {
    cart = await createCart({ items: [{ id: TWO_PACK }] });
  });

  const operations = (): Array<[string, string, unknown]> => {
    const line = `/agent/carts/${cart.id}/line-items/${cart.line_items[0].id}`;
    return [
      ['POST', '/agent/carts', { items: [{ id: TWO_PACK }] }],
      ['GET', `/agent/carts/${cart.id}`, undefined],
      ['POST', `/agent/carts/${cart.id}/line-items`, { id: TRAVEL }],
      ['PATCH', line, { quantity: 2 }],
      ['DELETE', line, undefined],
      ['POST', `/agent/carts/${cart.id}/checkout-session`, undefined],
    ];
  };

  // GET cannot carry a body (fetch refuses); every other operation is tried with each body.
  it.each([
    ['a valid body', (body: unknown) => ({ body })],
    ['malformed JSON', (_body: unknown, method: string) => (method === 'GET' ? {} : { body: '{"items": [' })],
    [
      'a body that is not JSON',
      (_body: unknown, method: string) =>
        method === 'GET' ? {} : { body: 'quantity=2', headers: { 'Content-Type': 'text/plain' } },
    ],
  ])('answers 403 insufficient_scope to a catalog:read token on every operation, with %s', async (_what, send) => {
    const before = await stored(cart.id);
    const carts = await cartCount();
    for (const [method, path, body] of operations()) {
      const answer = await call(method, path, { as: readOnlyToken, ...send(body, method) });
      expect(answer.status, `${method} ${path}`).toBe(403);
      expect(answer.body).toMatchObject({ error: 'insufficient_scope', scope: 'cart:write' });
      expect(answer.headers.get('www-authenticate')).toMatch(
        /^Bearer error="insufficient_scope", scope="cart:write", resource_metadata="/,
      );
    }
    expect(await stored(cart.id)).toEqual(before);
    expect(await cartCount()).toBe(carts);
  });

  it('answers 401 unauthorized without a token and 401 invalid_token with a bad one, on every operation', async () => {
    for (const [method, path, body] of operations()) {
      const missing = await call(method, path, { as: null, body });
      expect([missing.status, missing.body.error], `${method} ${path}`).toEqual([401, 'unauthorized']);
      expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="/);
      const invalid = await call(method, path, { as: 'sfat_not-a-real-token', body });
      expect([invalid.status, invalid.body.error]).toEqual([401, 'invalid_token']);
    }
    expect((await getCart(cart.id)).body).toEqual(cart);
  });
});
