// The merchant's catalogue and promotions (issue #35): creating a promotion (then redeemed by a real session), and
// publishing and unpublishing a product, which every catalogue surface and every new session honours.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { adminCall, adminToken, auditCount, newKey } from './support/admin.js';
import { callTool, connectMcp } from './support/mcp.js';
import { PROTOCOL_ENV, protocolFetch } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let promotions: string;
let catalog: string;
let agent: string;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
  promotions = await adminToken(api, 'admin:promotions');
  catalog = await adminToken(api, 'admin:catalog');
  agent = await agentToken(api, 'catalog:read cart:write');
});
afterAll(async () => {
  await api?.close();
});

const call = (method: string, path: string, init: Parameters<typeof adminCall>[3] = {}) =>
  adminCall(api, method, path, init);
const HOUR = 3_600_000;

describe('createPromotion', () => {
  it('creates a promotion a new session applies, once under its key, audited; listPromotions shows it', async () => {
    const key = newKey();
    const body = { code: 'spring-15', kind: 'percentage', value: 1500, region_id: 'reg_us', usage_limit: 2 };
    const created = await call('POST', '/admin/promotions', { token: promotions, key, body });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      code: 'SPRING-15',
      kind: 'percentage',
      value: 1500,
      currency: 'usd',
      min_subtotal: null,
      starts_at: null,
      ends_at: null,
      usage_limit: 2,
      times_redeemed: 0,
    });
    const replay = await call('POST', '/admin/promotions', { token: promotions, key, body });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(created.body);
    const taken = await call('POST', '/admin/promotions', { token: promotions, body: { ...body, code: 'SPRING-15' } });
    expect(taken).toMatchObject({ status: 409, body: { error: 'promotion_exists', param: 'code' } });

    const cart = await call('POST', '/agent/carts', {
      token: agent,
      key: null,
      body: { items: [{ id: 'variant_01tongue2pack', quantity: 1 }], promo_codes: ['Spring-15'] },
    });
    expect(cart.status).toBe(201);
    expect(JSON.stringify(cart.body)).toContain('SPRING-15');
    expect(cart.body.totals.discount.amount).toBe(Math.round(cart.body.totals.subtotal.amount * 15) / 100);

    const list = await call('GET', '/admin/promotions', { token: promotions });
    expect(list.body.data).toContainEqual(created.body);
    const audit = await call('GET', '/admin/audit?operation=createPromotion&target_id=SPRING-15', {
      token: await adminToken(api, 'admin:orders'),
    });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({ before: {}, after: { code: 'SPRING-15', value: 1500 } });
  });

  it('creates a fixed amount with a minimum, a start and an end', async () => {
    const startsAt = new Date(Date.now() + HOUR).toISOString();
    const endsAt = new Date(Date.now() + 48 * HOUR).toISOString();
    const created = await call('POST', '/admin/promotions', {
      token: promotions,
      body: {
        code: 'LATER5',
        kind: 'fixed',
        value: 500,
        region_id: 'reg_us',
        min_subtotal: 3000,
        starts_at: startsAt,
        ends_at: endsAt,
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'fixed', currency: 'usd', min_subtotal: 3000, starts_at: startsAt });
    expect(created.body.ends_at).toBe(endsAt);
    const cart = await call('POST', '/agent/carts', {
      token: agent,
      key: null,
      body: { items: [{ id: 'variant_01tongue2pack', quantity: 2 }], promo_codes: ['LATER5'] },
    });
    expect(JSON.stringify(cart.body)).toContain('promo_code_not_yet_active');
  });

  it('refuses hostile bodies with 400 and changes nothing', async () => {
    const before = { audit: await auditCount(api), count: (await api.service.deps.db('promotions')).length };
    const base = { code: 'BAD1', kind: 'percentage', value: 100 };
    const past = new Date(Date.now() - HOUR).toISOString();
    const hostile: Array<[unknown, string?]> = [
      [{}],
      [{ ...base, code: '' }],
      [{ ...base, code: 'with space' }],
      [{ ...base, code: 'x'.repeat(65) }],
      [{ ...base, code: '<script>' }],
      [{ ...base, code: 'DROP;--' }],
      [{ ...base, kind: 'bogo' }],
      [{ ...base, value: 0 }],
      [{ ...base, value: -5 }],
      [{ ...base, value: 2.5 }],
      [{ ...base, value: '100' }],
      [{ ...base, value: 10_001 }, 'value'],
      [{ ...base, kind: 'fixed' }, 'region_id'],
      [{ ...base, region_id: 'reg_mars' }, 'region_id'],
      [{ ...base, min_subtotal: 0 }],
      [{ ...base, usage_limit: 0 }],
      [{ ...base, usage_limit: 1e12 }],
      [{ ...base, starts_at: 'tomorrow' }],
      [{ ...base, ends_at: past }, 'ends_at'],
      [
        {
          ...base,
          starts_at: new Date(Date.now() + 2 * HOUR).toISOString(),
          ends_at: new Date(Date.now() + HOUR).toISOString(),
        },
        'ends_at',
      ],
      [{ ...base, times_redeemed: 5 }],
      [{ ...base, currency: 'usd' }],
      ['{"code":'],
      [[base]],
    ];
    for (const [body, param] of hostile) {
      const answer = await call('POST', '/admin/promotions', { token: promotions, body });
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
      if (param) expect(answer.body.param).toBe(param);
    }
    const noKey = await call('POST', '/admin/promotions', { token: promotions, key: null, body: base });
    expect(noKey).toMatchObject({ status: 400, body: { param: 'Idempotency-Key' } });
    expect(await auditCount(api)).toBe(before.audit);
    expect(await api.service.deps.db('promotions')).toHaveLength(before.count);
  });

  it('needs admin:promotions', async () => {
    const body = { code: 'SCOPE1', kind: 'percentage', value: 100 };
    expect((await call('POST', '/admin/promotions', { body })).status).toBe(401);
    for (const token of [catalog, await adminToken(api, 'admin:orders'), agent]) {
      const refused = await call('POST', '/admin/promotions', { token, body });
      expect(refused).toMatchObject({ status: 403, body: { error: 'insufficient_scope', scope: 'admin:promotions' } });
    }
    expect(await api.service.deps.db('promotions').where({ code: 'SCOPE1' })).toHaveLength(0);
  });
});

describe('publishing products', () => {
  const PRODUCT = 'prod_01tonguetravel';
  const HANDLE = 'tongue-scraper-2-pack-travel-cases';
  const VARIANT = 'variant_01tonguetravel';
  let mcp: Client;
  beforeAll(async () => {
    mcp = await connectMcp(api, '/catalog/mcp');
  });
  afterAll(async () => {
    await mcp?.close();
  });

  const acpCreate = () =>
    protocolFetch(api, '/acp/checkout_sessions', {
      method: 'POST',
      headers: {
        ...bearer(agent),
        'API-Version': '2026-04-17',
        'Content-Type': 'application/json',
        'Idempotency-Key': newKey(),
      },
      body: JSON.stringify({ line_items: [{ id: VARIANT, quantity: 1 }], currency: 'usd', capabilities: {} }),
    });

  it('an unpublished product leaves every catalogue and cannot be bought; published again, it is back', async () => {
    const product = await api.service.deps.db('products').where({ id: PRODUCT }).first();
    expect(product.handle).toBe(HANDLE);
    const key = newKey();
    const hidden = await call('POST', `/admin/products/${HANDLE}/unpublish`, {
      token: catalog,
      key,
      body: { reason: 'recalled' },
    });
    expect(hidden).toMatchObject({ status: 200, body: { id: PRODUCT, handle: HANDLE, published: false } });
    const replay = await call('POST', `/admin/products/${HANDLE}/unpublish`, {
      token: catalog,
      key,
      body: { reason: 'recalled' },
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    // Read for the first time after the change (the cached reads' window is 60 s, docs/admin.md).
    const publicList = await call('GET', '/api/store/products?limit=50');
    expect(publicList.body.products.map((p: any) => p.id)).not.toContain(PRODUCT);
    expect((await call('GET', `/api/store/products/${PRODUCT}`)).status).toBe(404);
    const agentList = await call('GET', '/agent/products?limit=50', { token: agent });
    expect(JSON.stringify(agentList.body)).not.toContain(PRODUCT);
    expect((await call('GET', `/agent/products/${HANDLE}`, { token: agent })).status).toBe(404);
    const search = await callTool(mcp, 'search_products', { limit: 50 });
    expect(JSON.stringify(search.structured)).not.toContain(PRODUCT);
    expect((await callTool(mcp, 'get_product', { product: HANDLE })).isError).toBe(true);
    const feed = await call('GET', '/acp/feed/products');
    if (feed.status === 200) expect(JSON.stringify(feed.body)).not.toContain(VARIANT);

    const rest = await call('POST', '/checkout-sessions', { key: null, body: { items: [{ id: VARIANT }] } });
    expect(rest.status).toBe(400);
    const cart = await call('POST', '/agent/carts', {
      token: agent,
      key: null,
      body: { items: [{ id: VARIANT, quantity: 1 }] },
    });
    expect(cart.status).toBe(400);
    const acp = await acpCreate();
    expect(JSON.stringify(acp.body)).not.toContain(`"id":"${VARIANT}"`);

    const shown = await call('POST', `/admin/products/${PRODUCT}/publish`, { token: catalog });
    expect(shown).toMatchObject({ status: 200, body: { id: PRODUCT, published: true } });
    const again = await call('POST', `/admin/products/${PRODUCT}/publish`, { token: catalog });
    expect(again).toMatchObject({ status: 200, body: { published: true } });
    expect((await call('GET', `/api/store/products/${PRODUCT}?fields=id`)).status).toBe(200);
    expect((await call('GET', `/agent/products/${PRODUCT}`, { token: agent })).status).toBe(200);
    const bought = await call('POST', '/checkout-sessions', { key: null, body: { items: [{ id: VARIANT }] } });
    expect(bought.status).toBe(201);

    const audit = await call('GET', `/admin/audit?target_id=${PRODUCT}`, {
      token: await adminToken(api, 'admin:orders'),
    });
    // Newest first: the publish that changed nothing is recorded too, with the same before and after.
    expect(audit.body.data).toMatchObject([
      { operation: 'publishProduct', before: { published: true }, after: { published: true } },
      { operation: 'publishProduct', before: { published: false }, after: { published: true } },
      { operation: 'unpublishProduct', before: { published: true }, after: { published: false, reason: 'recalled' } },
    ]);
  });

  it("an open session drops an unpublished product's line", async () => {
    const open = await call('POST', '/checkout-sessions', { key: null, body: { items: [{ id: VARIANT }] } });
    expect(open.status).toBe(201);
    await call('POST', `/admin/products/${PRODUCT}/unpublish`, { token: catalog });
    try {
      const read = await call('GET', `/checkout-sessions/${open.body.id}`);
      expect(JSON.stringify(read.body.line_items ?? read.body)).not.toContain(`"variant_id":"${VARIANT}"`);
    } finally {
      await call('POST', `/admin/products/${PRODUCT}/publish`, { token: catalog });
    }
  });

  it('needs admin:catalog, refuses hostile bodies and unknown products, and records nothing for them', async () => {
    const before = await auditCount(api);
    for (const action of ['publish', 'unpublish']) {
      expect((await call('POST', `/admin/products/${PRODUCT}/${action}`)).status).toBe(401);
      for (const token of [promotions, agent]) {
        const refused = await call('POST', `/admin/products/${PRODUCT}/${action}`, { token });
        expect(refused).toMatchObject({ status: 403, body: { scope: 'admin:catalog' } });
      }
      for (const body of [{ published: false }, { reason: 1 }, { reason: 'x'.repeat(501) }, '{"reason":', [1]]) {
        const answer = await call('POST', `/admin/products/${PRODUCT}/${action}`, { token: catalog, body });
        expect(answer.status, JSON.stringify(body)).toBe(400);
      }
      expect((await call('POST', `/admin/products/${PRODUCT}/${action}`, { token: catalog, key: null })).status).toBe(
        400,
      );
      expect((await call('POST', `/admin/products/prod_nope/${action}`, { token: catalog })).status).toBe(404);
    }
    expect(await auditCount(api)).toBe(before);
    expect((await api.service.deps.db('products').where({ id: PRODUCT }).first()).published).toBe(true);
  });
});
