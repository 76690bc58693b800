// A session's destination and shipping option (issue #32) on the service's own surfaces: REST create and update, MCP
// create_checkout_session and update_checkout_session, agent carts, the pay page, the test processor, the order and
// GET /agent/orders/{id}. The destination table (test/support/destinations.ts) is asserted to the minor unit over
// REST and MCP alike; a German address with Express is quoted, paid and recorded with 19 % VAT and the Express price.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, registerClient, requestToken } from './support/agent.js';
import { createSession, createdSession } from './support/checkout.js';
import { ADDRESSES, DESTINATION_TABLE, regionOf, restFigures } from './support/destinations.js';
import { callTool, connectMcp } from './support/mcp.js';
import { openPayForm, payWithTestProcessor } from './support/payments.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let mcp: Client;
beforeAll(async () => {
  api = await startTestService();
  mcp = await connectMcp(api, '/checkout/mcp');
});
afterAll(async () => {
  await mcp?.close();
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const db = () => api.service.deps.db;

function addressOf(destination: string) {
  return { recipient_name: 'Ada Lovelace', line1: '1 Test Street', ...ADDRESSES[destination]! };
}

const BERLIN = {
  recipient_name: 'Erika Mustermann',
  line1: 'Friedrichstraße 43',
  city: 'Berlin',
  postal_code: '10117',
  country: 'DE',
};

function createBody(destination: string, option: string, items: 1 | 2, promo: boolean) {
  return {
    items: [TWO_PACK, TRAVEL].slice(0, items).map((id) => ({ id, quantity: 1 })),
    region_id: regionOf(destination),
    ...(promo ? { promo_codes: ['10OFF'] } : {}),
    shipping_address: addressOf(destination),
    shipping_option: option,
  };
}

async function update(id: string, body: unknown, path = '/checkout_sessions') {
  const response = await api.http(`${path}/${id}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const getSession = async (id: string) => (await (await api.http(`/checkout_sessions/${id}`)).json()) as any;

describe('the destination table, to the minor unit, over REST and MCP', () => {
  it.each(DESTINATION_TABLE)(
    '%s, %s shipping, %i item(s), 10OFF %s',
    async (destination, option, items, promo, subtotal, discount, shipping, taxes, total) => {
      const body = createBody(destination, option, items, promo);
      const expected = { subtotal, discount, shipping, taxes, tax: taxes.reduce((sum, tax) => sum + tax, 0), total };
      const rest = await createdSession(api, body);
      expect(rest).toMatchObject({ totals_estimated: false, shipping_option: option });
      expect(restFigures(rest)).toEqual(expected);
      expect(restFigures(await getSession(rest.id))).toEqual(expected);
      const viaMcp = await callTool(mcp, 'create_checkout_session', body);
      expect(viaMcp.isError, viaMcp.texts.join()).toBe(false);
      expect(restFigures(viaMcp.structured)).toEqual(expected);
      expect(viaMcp.structured.totals).toEqual(rest.totals);
      expect(viaMcp.structured.tax_lines).toEqual(rest.tax_lines);
    },
  );
});

describe('a session without an address', () => {
  it('is priced as before and marked as an estimate', async () => {
    const session = await createdSession(api, { items: [{ id: TWO_PACK, quantity: 1 }], region_id: 'reg_eu' });
    expect(session).toMatchObject({ totals_estimated: true, tax_included: false });
    expect(session.shipping_address).toBeUndefined();
    expect(session.tax_lines).toBeUndefined();
  });
});

describe('Germany with Express, quoted, paid and recorded', () => {
  async function expectGermanExpress(session: any) {
    expect(session).toMatchObject({
      currency: 'eur',
      totals_estimated: false,
      tax_included: true,
      shipping_option: 'express',
      shipping_address: { ...BERLIN, line2: null, region: null },
      totals: { shipping: { amount: 14.95, currency: 'eur' }, total: { amount: 29.46 } },
      tax_lines: [{ jurisdiction: 'DE', tax_code: 'VAT', rate: 19, amount: { amount: 4.71, currency: 'eur' } }],
      shipping_tax: { amount: 2.39, currency: 'eur' },
    });
  }

  it('over REST: the options offered, the pay page, the test processor, the order as charged', async () => {
    const created = await createdSession(api, {
      items: [{ id: TWO_PACK, quantity: 1 }],
      region_id: 'reg_eu',
      shipping_address: BERLIN,
      shipping_option: 'express',
    });
    await expectGermanExpress(created);
    expect(created.shipping_options).toEqual([
      expect.objectContaining({ id: 'standard', amount: { amount: 4.95, currency: 'eur' } }),
      expect.objectContaining({
        id: 'express',
        amount: { amount: 14.95, currency: 'eur' },
        estimated_delivery: { min_business_days: 1, max_business_days: 3 },
      }),
    ]);
    const form = await openPayForm(api, created.id);
    expect(form.html).toContain('Erika Mustermann');
    expect(form.html).toContain('Express shipping: 1–3 business days');
    expect(form.html).toContain('VAT (DE) 19 %');
    expect(form.html).toContain('€29.46');
    await payWithTestProcessor(api, created.id);

    const paid = await getSession(created.id);
    expect(paid.status).toBe('completed');
    await expectGermanExpress(paid);
    const order = await db()('orders').where({ session_id: created.id }).first();
    expect(order).toMatchObject({ total: 2946, shipping: 1495, tax: 471, amount_paid: 2946 });
    expect(order.fulfilment).toMatchObject({
      shippingAddress: { country: 'DE', postalCode: '10117' },
      shippingOption: { code: 'express' },
      taxIncluded: true,
      taxes: [{ jurisdiction: 'DE', rate: 19000, amount: 471 }],
    });
    const receipt = await (await api.http(new URL(paid.order.permalink_url).pathname)).text();
    expect(receipt).toContain('Friedrichstraße 43');
    expect(receipt).toContain('VAT (DE) 19 %');
  });

  it('over MCP: created and paid, and get_checkout_session shows the order as charged', async () => {
    const created = await callTool(mcp, 'create_checkout_session', {
      items: [{ id: TWO_PACK, quantity: 1 }],
      region_id: 'reg_eu',
      shipping_address: BERLIN,
      shipping_option: 'express',
    });
    expect(created.isError, created.texts.join()).toBe(false);
    await expectGermanExpress(created.structured);
    await payWithTestProcessor(api, created.structured.id);
    const paid = await callTool(mcp, 'get_checkout_session', { id: created.structured.id });
    expect(paid.structured.status).toBe('completed');
    await expectGermanExpress(paid.structured);
  });

  it('over an agent cart: the address carries to its session, and GET /agent/orders/{id} shows it', async () => {
    const client = await registerClient(api, { scope: 'cart:write orders:read' });
    const token = await requestToken(api, client);
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await api.http(path, {
        method,
        headers: { ...bearer(token), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const cart = await call('POST', '/agent/carts', {
      items: [{ id: TWO_PACK, quantity: 1 }],
      region_id: 'reg_eu',
      shipping_address: BERLIN,
      shipping_option: 'express',
    });
    expect(cart.status).toBe(201);
    await expectGermanExpress(cart.body);
    const checkout = await call('POST', `/agent/carts/${cart.body.id}/checkout-session`);
    expect(checkout.status).toBe(201);
    await expectGermanExpress(checkout.body);
    await payWithTestProcessor(api, cart.body.id);
    const paid = await getSession(cart.body.id);
    const order = await call('GET', `/agent/orders/${paid.order.id}`);
    expect(order.status).toBe(200);
    expect(order.body).toMatchObject({
      tax_included: true,
      shipping_option: 'express',
      shipping_address: { country: 'DE', postal_code: '10117' },
      shipping_tax: { amount: 2.39, currency: 'eur' },
      tax_lines: [{ jurisdiction: 'DE', rate: 19, amount: { amount: 4.71, currency: 'eur' } }],
      totals: { shipping: { amount: 14.95 }, total: { amount: 29.46 } },
    });
  });

  it('keeps a paid order’s numbers when the rate changes later', async () => {
    const created = await createdSession(api, {
      items: [{ id: TWO_PACK, quantity: 1 }],
      region_id: 'reg_eu',
      shipping_address: BERLIN,
      shipping_option: 'express',
    });
    await payWithTestProcessor(api, created.id);
    const before = await getSession(created.id);
    const rows = () => db()('tax_rates').where({ country: 'DE', tax_code: 'VAT' });
    const original = await rows().select('id', 'rate');
    try {
      await rows().update({ rate: 25_000 });
      // An open session is re-priced at the new rate; the paid one is not.
      const open = await createdSession(api, {
        items: [{ id: TWO_PACK, quantity: 1 }],
        region_id: 'reg_eu',
        shipping_address: BERLIN,
      });
      expect(open.tax_lines[0].rate).toBe(25);
      const after = await getSession(created.id);
      expect(after).toEqual(before);
      await expectGermanExpress(after);
    } finally {
      for (const row of original) await db()('tax_rates').where({ id: row.id }).update({ rate: row.rate });
    }
  });
});

describe('changing the destination of an open session', () => {
  it('re-prices it over REST (POST /checkout_sessions/{id}) and over MCP (update_checkout_session)', async () => {
    const session = await createdSession(api, { items: [{ id: TWO_PACK, quantity: 1 }], region_id: 'reg_eu' });
    expect(session.totals_estimated).toBe(true);
    const german = await update(session.id, { shipping_address: BERLIN });
    expect(german.status).toBe(200);
    expect(german.body).toMatchObject({
      totals_estimated: false,
      shipping_option: 'standard',
      tax_lines: [{ jurisdiction: 'DE', rate: 19, amount: { amount: 3.11 } }],
      totals: { total: { amount: 19.46 } },
    });
    const irish = await callTool(mcp, 'update_checkout_session', {
      id: session.id,
      shipping_address: { ...BERLIN, city: 'Dublin', postal_code: null, country: 'IE' },
      shipping_option: 'express',
    });
    expect(irish.isError, irish.texts.join()).toBe(false);
    expect(irish.structured).toMatchObject({
      shipping_option: 'express',
      tax_lines: [{ jurisdiction: 'IE', rate: 23 }],
      totals: { shipping: { amount: 14.95 }, total: { amount: 29.46 } },
    });
    expect(await getSession(session.id)).toEqual(irish.structured);
    // At the hyphen spelling too; null removes the address: an estimate again.
    const cleared = await update(session.id, { shipping_address: null }, '/checkout-sessions');
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ totals_estimated: true, shipping_option: 'express' });
  });

  it('refuses an invalid address naming the field, and leaves the session as it was', async () => {
    const session = await createdSession(api, {
      items: [{ id: TWO_PACK, quantity: 1 }],
      region_id: 'reg_us',
      shipping_address: addressOf('US-OR'),
    });
    const cases: Array<[unknown, string]> = [
      [{ ...addressOf('US-OR'), country: 'XX' }, 'shipping_address.country'],
      [{ ...addressOf('US-OR'), region: 'ZZ' }, 'shipping_address.region'],
      [addressOf('DE'), 'shipping_address.country'],
      [{ ...addressOf('US-OR'), postal_code: 'ABCDE' }, 'shipping_address.postal_code'],
    ];
    for (const [shipping_address, param] of cases) {
      const refused = await update(session.id, { shipping_address, shipping_option: 'express' });
      expect(refused.status, param).toBe(400);
      expect(refused.body).toMatchObject({ type: 'invalid_request', code: 'invalid_address', param });
      expect(await getSession(session.id)).toEqual(session);
      const created = await createSession(api, { items: [{ id: TWO_PACK }], region_id: 'reg_us', shipping_address });
      expect(created.status).toBe(400);
      expect(created.body).toMatchObject({ code: 'invalid_address', param });
      const viaMcp = await callTool(mcp, 'update_checkout_session', { id: session.id, shipping_address });
      expect(viaMcp.isError).toBe(true);
      expect(viaMcp.texts.join()).toContain(`Argument ${param}:`);
    }
    expect(await getSession(session.id)).toEqual(session);
  });

  it('refuses to change a cancelled session (409) and answers 404 for an unknown one', async () => {
    const session = await createdSession(api, { items: [{ id: TWO_PACK, quantity: 1 }] });
    await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    const refused = await update(session.id, { shipping_option: 'express' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'session_canceled', param: 'id' });
    expect((await update('cart_unknown', { shipping_option: 'express' })).status).toBe(404);
  });
});
