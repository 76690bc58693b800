// Checkout sessions over real HTTP: pricing, promotions, items and their aliases, every bad input, the human
// hand-off, cancel and complete, versioning and retirement notices.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_READ_TABLES, statementsDuring } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService({
    env: { BASE_URL: 'https://store.example' },
    deprecations: [
      {
        subject: 'POST /checkout_sessions/{id}/complete',
        method: 'POST',
        path: /^\/checkout[-_]sessions\/[^/]+\/complete$/,
        deprecatedAt: '2026-11-01',
        sunsetAt: '2027-03-01',
        description: 'Test-only retirement.',
      },
    ],
  });
});
afterAll(async () => {
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await api.http(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
}
const create = (body: unknown, headers?: Record<string, string>) => post('/checkout_sessions', body, headers);
const cartCount = async () => Number((await api.service.deps.db('carts').count({ n: '*' }))[0]!.n);

describe('creating a session', () => {
  it('sends 2 statements: one read (region, variants, promotions) and the insert', async () => {
    const tables = ['regions', 'variants', 'promotions', 'carts', 'cart_line_items', 'idempotency_keys'];
    const statements = await statementsDuring(api.service.deps.db, tables, async () => {
      const { status, body } = await create({
        items: [{ id: TWO_PACK }, { sku: 'TS-316L-2PK-TC' }],
        promo_codes: ['10off'],
      });
      expect(status).toBe(201);
      expect(body.promo_codes).toEqual(['10OFF']);
    });
    expect(statements).toBe(2);
  });

  it('prices the cart exactly: two 2-packs and a travel set with 10OFF', async () => {
    const { status, body, headers } = await create({
      items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }],
      promo_codes: ['10off'],
    });
    expect(status).toBe(201);
    expect(headers.get('cache-control')).toBe('no-store');
    expect(headers.get('api-version')).toBe('2026-07-16');
    expect(body).toMatchObject({
      object: 'checkout_session',
      status: 'ready_for_payment',
      currency: 'usd',
      region_id: 'reg_us',
      promo_codes: ['10OFF'],
      messages: [],
    });
    expect(body.id).toMatch(/^cart_/);
    const usd = (amount: number) => ({ amount, currency: 'usd' });
    expect(body.totals).toEqual({
      subtotal: usd(45.97),
      discount: usd(4.6),
      shipping: usd(0),
      tax: usd(3),
      total: usd(44.37),
    });
    expect(
      body.line_items.map((line: any) => [
        line.item.id,
        line.item.quantity,
        line.base_amount,
        line.discount,
        line.subtotal,
        line.tax,
        line.total,
      ]),
    ).toEqual([
      [TWO_PACK, 2, 25.98, 2.6, 23.38, 1.7, 25.08],
      [TRAVEL, 1, 19.99, 2, 17.99, 1.3, 19.29],
    ]);
    expect(body.payment_provider).toEqual({
      provider: 'human_handoff',
      checkout_url: `https://store.example/pay/${body.id}`,
      note: expect.stringMatching(/human/),
    });
  });

  it('is served at both spellings of the path', async () => {
    const hyphen = await post('/checkout-sessions', { items: [{ id: TWO_PACK }] });
    expect(hyphen.status).toBe(201);
    expect(hyphen.body.totals.shipping.amount).toBe(4.95);
    expect(hyphen.body.totals.total).toEqual({ amount: 18.88, currency: 'usd' }); // 12.99 + 0.94 tax + 4.95 shipping
  });

  it('accepts every item identifier and merges the same variant into one line', async () => {
    const { status, body } = await create({
      items: [
        { variant_id: TWO_PACK },
        { handle: 'tongue-scraper-2-pack', quantity: 2 },
        { sku: 'TS-316L-2PK-TC' },
        { id: 'tongue-scraper-2-pack-travel-cases', quantity: 3 },
      ],
    });
    expect(status).toBe(201);
    expect(body.line_items.map((line: any) => [line.item.id, line.item.quantity])).toEqual([
      [TWO_PACK, 3],
      [TRAVEL, 4],
    ]);
  });

  it('reports codes that do not apply in messages and lists only the applied one', async () => {
    // Aliases merge in the documented order: promo_codes, promo_code, discount_code, discount_codes, coupon_code, coupon_codes.
    const { body } = await create({
      items: [{ id: TWO_PACK }],
      coupon_code: 'SPRING20',
      discount_codes: ['nope', '10OFF', 'launch50', '10off'],
    });
    expect(body.promo_codes).toEqual(['10OFF']);
    expect(body.messages).toEqual([
      {
        type: 'warning',
        code: 'promo_code_invalid',
        param: 'promo_codes[0]',
        message: expect.stringContaining('nope'),
      },
      {
        type: 'warning',
        code: 'promo_code_exhausted',
        param: 'promo_codes[2]',
        message: expect.stringContaining('launch50'),
      },
      { type: 'warning', code: 'promo_code_duplicate', param: 'promo_codes[3]', message: expect.any(String) },
      {
        type: 'warning',
        code: 'promo_code_expired',
        param: 'promo_codes[4]',
        message: expect.stringContaining('SPRING20'),
      },
    ]);
    expect(body.totals.discount.amount).toBe(1.3);
  });

  it.each([['promo_code'], ['discount_code'], ['coupon_codes'], ['promo_codes']])(
    'accepts the %s alias',
    async (alias) => {
      const { body } = await create({ items: [{ id: TWO_PACK }], [alias]: alias.endsWith('s') ? ['10OFF'] : '10OFF' });
      expect(body.promo_codes).toEqual(['10OFF']);
    },
  );

  it('prices in the requested region and currency, with its tax and shipping', async () => {
    const eur = await create({ items: [{ id: TWO_PACK }], region_id: 'reg_eu' });
    expect(eur.body.currency).toBe('eur');
    expect(eur.body.totals).toMatchObject({
      subtotal: { amount: 11.99, currency: 'eur' },
      tax: { amount: 2.52 },
      shipping: { amount: 4.95 },
      total: { amount: 19.46 },
    });
    const jpy = await create({ items: [{ id: TRAVEL, quantity: 2 }], region_id: 'reg_jp', promo_codes: ['10OFF'] });
    expect(jpy.body.totals).toMatchObject({
      subtotal: { amount: 5800 },
      discount: { amount: 580 },
      shipping: { amount: 0 },
      tax: { amount: 522 },
      total: { amount: 5742 },
    });
    const welcome = await create({ items: [{ id: TWO_PACK }], region_id: 'reg_eu', promo_codes: ['WELCOME5'] });
    expect(welcome.body.messages[0]).toMatchObject({ code: 'promo_code_not_applicable', param: 'promo_codes[0]' });
  });

  it('charges and reserves nothing: stock is unchanged', async () => {
    // Each read starts from an empty read cache, so it shows the stock the database holds now.
    const stock = async () => {
      api.service.deps.readCache.clear();
      const { data } = await api.client.GET('/api/store/products', {
        params: { query: { fields: '+variants.inventory_quantity' } },
      });
      const variants = data!.products.flatMap((product) => product.variants ?? []);
      return variants.find((variant) => variant.id === TRAVEL)!.inventory_quantity;
    };
    const before = await stock();
    await create({ items: [{ id: TRAVEL, quantity: 5 }] });
    expect(await stock()).toBe(before);
  });
});

describe('bad input is a 400 naming the parameter, and stores nothing', () => {
  it.each([
    ['a missing items list', {}, 'missing_field', 'items'],
    ['an empty items list', { items: [] }, 'invalid_field', 'items'],
    ['items that are not a list', { items: 'x' }, 'invalid_field', 'items'],
    ['a zero quantity', { items: [{ id: TWO_PACK, quantity: 0 }] }, 'invalid_field', 'items[0].quantity'],
    ['a quantity over 100', { items: [{ id: TWO_PACK, quantity: 101 }] }, 'invalid_field', 'items[0].quantity'],
    ['a fractional quantity', { items: [{ id: TWO_PACK, quantity: 1.5 }] }, 'invalid_field', 'items[0].quantity'],
    ['a quantity as a string', { items: [{ id: TWO_PACK, quantity: '2' }] }, 'invalid_field', 'items[0].quantity'],
    ['an unknown variant', { items: [{ id: 'variant_nope' }] }, 'unknown_item', 'items[0].id'],
    ['an unknown handle', { items: [{ id: TWO_PACK }, { handle: 'spoon' }] }, 'unknown_item', 'items[1].handle'],
    ['an unknown SKU', { items: [{ sku: 'NOPE' }] }, 'unknown_item', 'items[0].sku'],
    ['an item without identifier', { items: [{ quantity: 2 }] }, 'missing_item_identifier', 'items[0].id'],
    ['an item with two identifiers', { items: [{ id: TWO_PACK, sku: 'TS-316L-2PK' }] }, 'ambiguous_item', 'items[0]'],
    ['an empty identifier', { items: [{ id: '' }] }, 'invalid_field', 'items[0].id'],
    ['an unknown item field', { items: [{ id: TWO_PACK, qty: 2 }] }, 'unknown_field', 'items[0].qty'],
    [
      'an unknown top-level field',
      { items: [{ id: TWO_PACK }], payment_token: 'tok' },
      'unknown_field',
      'payment_token',
    ],
    [
      'a bad buyer email',
      { items: [{ id: TWO_PACK }], buyer: { email: 'not-an-email' } },
      'invalid_field',
      'buyer.email',
    ],
    ['an unknown region', { items: [{ id: TWO_PACK }], region_id: 'reg_mars' }, 'invalid_parameter', 'region_id'],
    [
      'a promo code that is not a string',
      { items: [{ id: TWO_PACK }], promo_codes: [5] },
      'invalid_field',
      'promo_codes',
    ],
    ['more than the stock', { items: [{ id: TRAVEL, quantity: 86 }] }, 'insufficient_stock', 'items[0].quantity'],
    [
      'merged lines over 100',
      {
        items: [
          { id: TWO_PACK, quantity: 60 },
          { sku: 'TS-316L-2PK', quantity: 41 },
        ],
      },
      'quantity_too_large',
      'items[0].quantity',
    ],
    ['a JSON array body', [{ id: TWO_PACK }], 'invalid_field', 'body'],
  ])('rejects %s', async (_what, body, code, param) => {
    const before = await cartCount();
    const response = await create(body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'invalid_request', code, param });
    expect(response.body.message.length).toBeGreaterThan(10);
    expect(await cartCount()).toBe(before);
  });

  it('says how many are in stock', async () => {
    const { body } = await create({ items: [{ id: TRAVEL, quantity: 86 }] });
    expect(body.available).toBe(85);
    expect(body.message).toContain('Only 85');
  });

  it('rejects malformed JSON and the wrong content type', async () => {
    expect((await create('{"items": [')).body).toMatchObject({ code: 'invalid_body', param: 'body' });
    const text = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ items: [{ id: TWO_PACK }] }),
    });
    expect(text.status).toBe(400);
    expect(await text.json()).toMatchObject({ code: 'invalid_content_type', param: 'Content-Type' });
    const none = await api.http('/checkout_sessions', { method: 'POST' });
    expect(none.status).toBe(400);
  });

  it('lists the variants of a product with several, to choose from', async () => {
    const db = api.service.deps.db;
    await db('products').insert({ id: 'prod_test_multi', title: 'Multi', handle: 'multi-variant', rank: 99 });
    await db('variants').insert([
      {
        id: 'variant_test_a',
        product_id: 'prod_test_multi',
        title: 'A',
        sku: 'T-A',
        manage_inventory: false,
        allow_backorder: false,
        rank: 1,
      },
      {
        id: 'variant_test_b',
        product_id: 'prod_test_multi',
        title: 'B',
        sku: 'T-B',
        manage_inventory: false,
        allow_backorder: false,
        rank: 2,
      },
    ]);
    const { status, body } = await create({ items: [{ handle: 'multi-variant' }] });
    expect(status).toBe(400);
    expect(body).toMatchObject({
      code: 'variant_required',
      param: 'items[0].handle',
      variant_ids: ['variant_test_a', 'variant_test_b'],
    });
    const unpriced = await create({ items: [{ id: 'variant_test_a' }] });
    expect(unpriced.body).toMatchObject({ code: 'item_unavailable_in_region', param: 'items[0]' });
  });
});

describe('reading, completing and cancelling', () => {
  it('reads a session in 1 statement: cart, lines, prices, region and promotions together', async () => {
    const created = await create({ items: [{ id: TWO_PACK }, { id: TRAVEL }], promo_codes: ['10OFF', 'NOPE'] });
    const statements = await statementsDuring(api.service.deps.db, SESSION_READ_TABLES, async () => {
      const read = await api.http(`/checkout_sessions/${created.body.id}`);
      expect(await read.json()).toEqual(created.body);
    });
    expect(statements).toBe(1);
  });

  it('applies a stored code around which the database trims less than the domain does (a tab, as ACP may send)', async () => {
    const created = await create({ items: [{ id: TWO_PACK, quantity: 2 }], promo_codes: ['10off'] });
    expect(created.body.promo_codes).toEqual(['10OFF']);
    await api.service.deps
      .db('carts')
      .where({ id: created.body.id })
      .update({ promo_codes: ['\t10off\n'] });
    const read = await api.http(`/checkout_sessions/${created.body.id}`);
    expect(await read.json()).toEqual(created.body);
  });

  it('re-reads the session and recomputes totals live from current prices', async () => {
    const created = await create({ items: [{ id: TWO_PACK, quantity: 2 }], promo_codes: ['10OFF'] });
    const read = await api.client.GET('/checkout_sessions/{id}', { params: { path: { id: created.body.id } } });
    expect(read.data).toEqual(created.body);
    const hyphen = await api.http(`/checkout-sessions/${created.body.id}`);
    expect(await hyphen.json()).toEqual(created.body);

    const prices = api.service.deps.db('variant_prices').where({ variant_id: TWO_PACK, region_id: 'reg_us' });
    await prices.clone().update({ amount: 1499 });
    try {
      const repriced = await api.client.GET('/checkout_sessions/{id}', { params: { path: { id: created.body.id } } });
      expect(repriced.data!.totals.subtotal.amount).toBe(29.98);
      expect(repriced.data!.totals.total.amount).toBe(28.94); // 29.98 − 3.00 discount + 1.96 tax (7.25% of 26.98), free shipping
    } finally {
      await prices.clone().update({ amount: 1299 });
    }
  });

  it('never completes: 422 delegated_payment_not_supported naming human_handoff, and nothing changes', async () => {
    const { body: session } = await create({ items: [{ id: TWO_PACK }] });
    for (const path of [`/checkout_sessions/${session.id}/complete`, `/checkout-sessions/${session.id}/complete`]) {
      const plain = await api.http(path, { method: 'POST' });
      expect(plain.status).toBe(422);
      const refusal = await plain.json();
      expect(refusal).toMatchObject({
        type: 'invalid_request',
        code: 'delegated_payment_not_supported',
        supported_payment_modes: ['human_handoff'],
      });
      // An ACP-style complete body is declared and ignored: a validating proxy lets it through, and the answer is
      // the one given without a body.
      const acpStyle = await post(path, {
        buyer: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
        payment_data: { token: 'spt_123', provider: 'stripe', billing_address: { country: 'US' } },
      });
      expect(acpStyle.status).toBe(422);
      expect(acpStyle.body).toEqual(refusal);
      // What is sent must still be a JSON body: a malformed one or another media type is the documented 400.
      const malformed = await post(path, '{"payment_data": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: 'invalid_body', param: 'body' });
      const text = await post(path, 'pay', { 'Content-Type': 'text/plain' });
      expect(text.status).toBe(400);
      expect(text.body).toMatchObject({ code: 'invalid_content_type', param: 'Content-Type' });
    }
    expect((await api.client.GET('/checkout_sessions/{id}', { params: { path: { id: session.id } } })).data).toEqual(
      session,
    );
  });

  it('cancels permanently; a second cancel answers the same cancelled session', async () => {
    const { body: session } = await create({ items: [{ id: TRAVEL }] });
    const first = await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    const cancelled = (await first.json()) as any;
    expect(first.status).toBe(200);
    expect(cancelled).toEqual({
      ...session,
      status: 'canceled',
      payment_provider: { ...session.payment_provider, note: expect.stringMatching(/can no longer be paid/) },
    });
    expect(cancelled.payment_provider.note).not.toMatch(/send the buyer/);
    const second = await api.http(`/checkout-sessions/${session.id}/cancel`, { method: 'POST' });
    expect(await second.json()).toEqual(cancelled);
    const canceledAt = (await api.service.deps.db('carts').where({ id: session.id }).first()).canceled_at;
    await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    expect((await api.service.deps.db('carts').where({ id: session.id }).first()).canceled_at).toEqual(canceledAt);
    expect((await api.http(`/checkout_sessions/${session.id}/complete`, { method: 'POST' })).status).toBe(422);
  });

  it.each([
    ['GET', '/checkout_sessions/cart_missing'],
    ['GET', '/checkout-sessions/cart_missing'],
    ['POST', '/checkout_sessions/cart_missing/complete'],
    ['POST', '/checkout_sessions/cart_missing/cancel'],
  ])('answers 404 session_not_found to %s %s', async (method, path) => {
    const response = await api.http(path, { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ type: 'invalid_request', code: 'session_not_found', param: 'id' });
  });
});

describe('the human hand-off page', () => {
  it('shows the priced cart and where payment happens', async () => {
    const { body: session } = await create({ items: [{ id: TWO_PACK, quantity: 2 }], promo_codes: ['10OFF'] });
    const page = await api.http(`/pay/${session.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain(`$${session.totals.total.amount.toFixed(2)}`);
    expect(html).toContain('external payment processor');
    expect(html).toContain('10OFF');
  });

  it('answers a JSON 404 for an unknown session', async () => {
    const page = await api.http('/pay/cart_missing');
    expect(page.status).toBe(404);
    expect(((await page.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});

describe('versioning and retirements', () => {
  it('pins a version by date and rejects dates it cannot serve', async () => {
    const pinned = await create({ items: [{ id: TWO_PACK }] }, { 'API-Version': '2026-09-30' });
    expect(pinned.status).toBe(201);
    expect(pinned.headers.get('api-version')).toBe('2026-07-16');
    for (const bad of ['2026-07-15', 'yesterday', '2026-02-30']) {
      const rejected = await create({ items: [{ id: TWO_PACK }] }, { 'API-Version': bad });
      expect(rejected.status).toBe(400);
      expect(rejected.body).toMatchObject({
        code: 'unsupported_api_version',
        param: 'API-Version',
        supported_versions: ['2026-07-16'],
      });
      expect(rejected.headers.get('api-version')).toBe('2026-07-16');
    }
  });

  it('announces a retirement with Deprecation, Sunset and a changelog link on the affected route only', async () => {
    const { body: session } = await create({ items: [{ id: TWO_PACK }] });
    const complete = await api.http(`/checkout_sessions/${session.id}/complete`, { method: 'POST' });
    expect(complete.headers.get('deprecation')).toBe(`@${Date.UTC(2026, 10, 1) / 1000}`);
    expect(complete.headers.get('sunset')).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(complete.headers.get('link')).toBe(
      '<https://store.example/changelog>; rel="deprecation"; type="application/json"',
    );
    const read = await api.http(`/checkout_sessions/${session.id}`);
    expect(read.headers.has('deprecation')).toBe(false);
    const changelog = await api.client.GET('/changelog');
    expect(changelog.data!.current_version).toBe('2026-07-16');
    expect(changelog.data!.deprecations).toEqual([
      {
        subject: 'POST /checkout_sessions/{id}/complete',
        deprecated_at: '2026-11-01',
        sunset_at: '2027-03-01',
        description: 'Test-only retirement.',
      },
    ]);
  });
});
