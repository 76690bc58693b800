// ACP 2026-04-17's fulfillment_details, fulfillment_options and selected_fulfillment_options (issue #32) over HTTP,
// on ACP REST and ACP over MCP: a session is priced for the buyer's address by the one create and update of
// src/services, so every row of the destination table (test/support/destinations.ts) gives through ACP exactly the
// totals REST gives; a German address with Express is quoted, paid and recorded with 19 % VAT and the Express price;
// a change of address re-prices; an address the store does not ship to is ACP's business outcome (not ready for
// payment, a message naming the field) and an update sending one changes nothing. Every body is validated against the
// OpenAPI document and ACP's own schema (protocolFetch, protocolSchemaProblems).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acpTotalsProblems } from '../src/conformance/invariants.js';
import { protocolSchemaProblems } from '../src/protocols/schemas.js';
import { agentToken, bearer } from './support/agent.js';
import { createdSession } from './support/checkout.js';
import { contractFetch } from './support/contract.js';
import { ADDRESSES, DESTINATION_TABLE, regionOf, restFigures } from './support/destinations.js';
import { payWithTestProcessor } from './support/payments.js';
import { PROTOCOL_ENV, protocolFetch, testValidators } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let token: string;
let mcp: Client;
let keyCounter = 0;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
  token = await agentToken(api, 'cart:write');
  mcp = new Client({ name: 'acp-fulfilment-tests', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL('/acp/mcp', api.url), {
      fetch: contractFetch,
      requestInit: { headers: bearer(token) },
    }),
  );
});
afterAll(async () => {
  await mcp?.close();
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const CURRENCY: Record<string, string> = { reg_us: 'usd', reg_eu: 'eur', reg_gb: 'gbp', reg_ca: 'cad', reg_jp: 'jpy' };
const nextKey = () => `fulfil-${Date.now()}-${keyCounter++}`;
const db = () => api.service.deps.db;

function post(path: string, body: unknown) {
  return protocolFetch(api, path, {
    method: 'POST',
    headers: {
      ...bearer(token),
      'API-Version': '2026-04-17',
      'Content-Type': 'application/json',
      'Idempotency-Key': nextKey(),
    },
    body: JSON.stringify(body),
  });
}
const create = (body: unknown) => post('/acp/checkout_sessions', body);
const update = (id: string, body: unknown) => post(`/acp/checkout_sessions/${id}`, body);
const read = (id: string) =>
  protocolFetch(api, `/acp/checkout_sessions/${id}`, { headers: { ...bearer(token), 'API-Version': '2026-04-17' } });

/** ACP's Address for a destination of the table (state and postal code are required by ACP; empty where none). */
function acpAddress(destination: string) {
  const { region, postal_code, city, country } = ADDRESSES[destination]!;
  return {
    name: 'Ada Lovelace',
    line_one: '1 Test Street',
    city,
    state: region ?? '',
    country,
    postal_code: postal_code ?? '',
  };
}

const BERLIN = {
  name: 'Erika Mustermann',
  line_one: 'Friedrichstraße 43',
  city: 'Berlin',
  state: 'BE',
  country: 'DE',
  postal_code: '10117',
};

function createBody(currency: string, address: object | undefined, items: 1 | 2 = 1, promo = false) {
  return {
    line_items: [TWO_PACK, TRAVEL].slice(0, items).map((id) => ({ id, quantity: 1 })),
    currency,
    capabilities: {},
    ...(promo ? { discounts: { codes: ['10OFF'] } } : {}),
    ...(address ? { fulfillment_details: { name: 'Ada Lovelace', address } } : {}),
  };
}

const selectOption = (session: any, option: string) => ({
  selected_fulfillment_options: [
    { type: 'shipping', option_id: option, item_ids: session.line_items.map((line: any) => line.id) },
  ],
});

/** A session's figures in minor units, as the table states them. */
function acpFigures(session: any) {
  const of = (type: string) => session.totals.find((total: any) => total.type === type)?.amount ?? 0;
  const tax = session.totals.find((total: any) => total.type === 'tax');
  return {
    subtotal: of('items_base_amount'),
    discount: of('items_discount'),
    shipping: of('fulfillment'),
    taxes: (tax.breakdown ?? []).map((entry: any) => entry.amount),
    tax: tax.amount,
    total: of('total'),
  };
}

function expectConsistent(session: any) {
  expect(acpTotalsProblems(session)).toEqual([]);
}

describe('the destination table through ACP, to the minor unit, as REST gives it', () => {
  it.each(DESTINATION_TABLE)(
    '%s, %s shipping, %i item(s), 10OFF %s',
    async (destination, option, items, promo, subtotal, discount, shipping, taxes, total) => {
      const expected = { subtotal, discount, shipping, taxes, tax: taxes.reduce((sum, tax) => sum + tax, 0), total };
      const region = regionOf(destination);
      const rest = await createdSession(api, {
        items: [TWO_PACK, TRAVEL].slice(0, items).map((id) => ({ id, quantity: 1 })),
        region_id: region,
        ...(promo ? { promo_codes: ['10OFF'] } : {}),
        shipping_address: { recipient_name: 'Ada Lovelace', line1: '1 Test Street', ...ADDRESSES[destination]! },
        shipping_option: option,
      });
      const created = await create(createBody(CURRENCY[region]!, acpAddress(destination), items, promo));
      expect(created.response.status).toBe(201);
      let session = created.body;
      expect(session.status).toBe('requires_escalation');
      expect(session.fulfillment_options.map((offered: any) => offered.id)).toEqual(['standard', 'express']);
      if (option === 'express') {
        const chosen = await update(session.id, selectOption(session, 'express'));
        expect(chosen.response.status).toBe(200);
        session = chosen.body;
      }
      expect(session.selected_fulfillment_options).toEqual([
        { type: 'shipping', option_id: option, item_ids: session.line_items.map((line: any) => line.id) },
      ]);
      expect(acpFigures(session)).toEqual(expected);
      expect(acpFigures(session)).toEqual(restFigures(rest));
      // The option chosen costs what the totals charge for shipping.
      const offered = session.fulfillment_options.find((entry: any) => entry.id === option);
      expect(offered.totals).toEqual([{ type: 'fulfillment', display_text: 'Shipping', amount: shipping }]);
      expectConsistent(session);
      expect((await read(session.id)).body).toEqual(session);
    },
  );
});

describe('Germany with Express over ACP REST', () => {
  it('offers Standard and Express with their windows, charges 19 % VAT and the Express price, and the order keeps them', async () => {
    const created = await create(createBody('eur', BERLIN));
    expect(created.response.status).toBe(201);
    const session = created.body;
    expect(session.fulfillment_details).toEqual({ name: 'Ada Lovelace', address: BERLIN });
    const [standard, express] = session.fulfillment_options;
    expect(standard).toMatchObject({
      type: 'shipping',
      id: 'standard',
      totals: [{ type: 'fulfillment', amount: 495 }],
    });
    expect(express).toMatchObject({
      type: 'shipping',
      id: 'express',
      title: expect.any(String),
      description: expect.any(String),
      totals: [{ type: 'fulfillment', amount: 1495 }],
    });
    // Express's 1–3 business days and Standard's 3–6, counted from today.
    const days = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 86_400_000;
    const today = new Date().toISOString().slice(0, 10);
    expect(days(`${today}T00:00:00.000Z`, express.earliest_delivery_time)).toBeGreaterThanOrEqual(1);
    expect(days(express.earliest_delivery_time, express.latest_delivery_time)).toBeLessThan(
      days(standard.earliest_delivery_time, standard.latest_delivery_time) + 3,
    );
    expect(Date.parse(express.latest_delivery_time)).toBeLessThan(Date.parse(standard.latest_delivery_time));
    expect(session.selected_fulfillment_options[0].option_id).toBe('standard');

    const chosen = await update(session.id, selectOption(session, 'express'));
    expect(chosen.response.status).toBe(200);
    expect(chosen.body.status).toBe('requires_escalation');
    expect(chosen.body.messages.filter((message: any) => message.type === 'error')).toEqual([]);
    expect(chosen.body.totals).toEqual([
      { type: 'items_base_amount', display_text: 'Items', amount: 1451 },
      { type: 'subtotal', display_text: 'Subtotal', amount: 1451 },
      { type: 'fulfillment', display_text: 'Shipping', amount: 1495 },
      {
        type: 'tax',
        display_text: 'Tax (included)',
        amount: 471,
        description: 'Included in the amounts above; not added to the total.',
        breakdown: [{ jurisdiction: 'VAT (DE)', rate: 0.19, amount: 471 }],
      },
      { type: 'total', display_text: 'Total', amount: 2946 },
    ]);
    expectConsistent(chosen.body);

    await payWithTestProcessor(api, session.id);
    const paid = await read(session.id);
    expect(paid.body.status).toBe('completed');
    expect(paid.body.totals).toEqual(chosen.body.totals);
    expect(paid.body.selected_fulfillment_options[0].option_id).toBe('express');
    expect(paid.body.order.totals).toEqual(chosen.body.totals);
    const order = await db()('orders').where({ session_id: session.id }).first();
    expect(order).toMatchObject({ total: 2946, shipping: 1495, tax: 471, amount_paid: 2946 });
    expect(order.fulfilment).toMatchObject({
      shippingAddress: {
        recipientName: 'Erika Mustermann',
        line1: 'Friedrichstraße 43',
        city: 'Berlin',
        region: 'DE-BE',
        postalCode: '10117',
        country: 'DE',
      },
      shippingOption: { code: 'express' },
      taxIncluded: true,
      taxes: [{ jurisdiction: 'DE', rate: 19000, amount: 471 }],
    });
  });
});

describe('a change of address re-prices an open ACP session', () => {
  it('from no address (an estimate) to Germany, to Ireland with Express, and back to none', async () => {
    const created = await create(createBody('eur', undefined));
    const estimate = created.body;
    expect(estimate.fulfillment_options.map((option: any) => option.id)).toEqual(['standard']);
    // Without an address only Standard is offered.
    const early = await update(estimate.id, selectOption(estimate, 'express'));
    expect(early.body.messages).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'invalid', param: '$.selected_fulfillment_options[0]' }),
    );

    const german = await update(estimate.id, { fulfillment_details: { address: BERLIN } });
    expect(acpFigures(german.body)).toMatchObject({ shipping: 495, taxes: [311], tax: 311, total: 1946 });
    // The address and Express in one update: the option is checked against the new destination.
    const irish = await update(estimate.id, {
      fulfillment_details: { address: { ...BERLIN, city: 'Dublin', state: '', postal_code: '', country: 'IE' } },
      ...selectOption(estimate, 'express'),
    });
    expect(irish.body.status).toBe('requires_escalation');
    expect(acpFigures(irish.body)).toMatchObject({ shipping: 1495, taxes: [551], total: 2946 });
    expect(irish.body.totals.find((total: any) => total.type === 'tax').breakdown).toEqual([
      { jurisdiction: 'VAT (IE)', rate: 0.23, amount: 551 },
    ]);
    expectConsistent(irish.body);
    expect((await read(estimate.id)).body).toEqual(irish.body);

    const none = await update(estimate.id, { fulfillment_details: { name: 'Ada Lovelace' } });
    expect(none.body.fulfillment_options.map((option: any) => option.id)).toEqual(['standard']);
    expect(acpFigures(none.body)).toMatchObject(acpFigures(estimate));
  });

  it('refuses an option the destination does not offer, and leaves the session as it was', async () => {
    const session = (await create(createBody('eur', BERLIN))).body;
    const refused = await update(session.id, selectOption(session, 'overnight'));
    expect(refused.response.status).toBe(200);
    expect(refused.body.messages).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'invalid', param: '$.selected_fulfillment_options[0]' }),
    );
    expect((await read(session.id)).body).toEqual(session);
  });
});

describe('an address the store does not ship to is not ready for payment, naming the field', () => {
  const INVALID: Array<[string, string, object, string, string]> = [
    [
      'an unknown country',
      'usd',
      { ...acpAddress('US-OR'), country: 'XX' },
      '$.fulfillment_details.address.country',
      'invalid',
    ],
    [
      'a region not in the country',
      'usd',
      { ...acpAddress('US-OR'), state: 'ZZ' },
      '$.fulfillment_details.address.state',
      'invalid',
    ],
    [
      'a country outside the currency’s region',
      'usd',
      BERLIN,
      '$.fulfillment_details.address.country',
      'region_restricted',
    ],
    [
      'a country the store does not ship to',
      'eur',
      { ...BERLIN, country: 'BR' },
      '$.fulfillment_details.address.country',
      'region_restricted',
    ],
  ];

  it.each(INVALID)('on create: %s', async (_case, currency, address, param, code) => {
    const created = await create(createBody(currency, address));
    expect(created.response.status).toBe(201);
    expect(created.body.status).toBe('not_ready_for_payment');
    expect(created.body.messages).toContainEqual(
      expect.objectContaining({ type: 'error', code, param, content: expect.stringContaining(param.slice(2)) }),
    );
    // Priced as an estimate, without the address; a read shows the same until an update sends a good one.
    expect(created.body.fulfillment_options.map((option: any) => option.id)).toEqual(['standard']);
    expect((await read(created.body.id)).text).toBe(created.text);
    const fixed = await update(created.body.id, {
      fulfillment_details: { address: currency === 'usd' ? acpAddress('US-OR') : BERLIN },
    });
    expect(fixed.body.status).toBe('requires_escalation');
    expect(fixed.body.messages.filter((message: any) => message.type === 'error')).toEqual([]);
  });

  it.each(INVALID)('on update: %s, the stored session unchanged', async (_case, currency, address, param, code) => {
    const session = (await create(createBody(currency, currency === 'usd' ? acpAddress('US-CA') : BERLIN, 2))).body;
    const cart = await db()('carts').where({ id: session.id }).first();
    const refused = await update(session.id, {
      fulfillment_details: { address },
      line_items: [{ id: TWO_PACK, quantity: 3 }],
      ...selectOption(session, 'express'),
    });
    expect(refused.response.status).toBe(200);
    expect(refused.body.status).toBe('not_ready_for_payment');
    expect(refused.body.messages).toContainEqual(expect.objectContaining({ type: 'error', code, param }));
    expect(refused.body.totals).toEqual(session.totals);
    expect((await read(session.id)).body).toEqual(session);
    expect(await db()('carts').where({ id: session.id }).first()).toEqual(cart);
  });
});

/** An ACP tool call over MCP, its result checked against ACP's schema. */
async function callAcpTool(name: string, args: Record<string, unknown>) {
  const result = (await mcp.callTool({ name, arguments: args })) as {
    isError?: boolean;
    content: Array<{ type: string; text: string }>;
  };
  const body = JSON.parse(result.content[0]!.text);
  const schema = result.isError ? 'acp.Error' : body?.order ? 'acp.CheckoutSessionWithOrder' : 'acp.CheckoutSession';
  expect(protocolSchemaProblems(testValidators, schema, body), JSON.stringify(body)).toEqual([]);
  return { isError: result.isError === true, body };
}
const meta = () => ({ api_version: '2026-04-17', idempotency_key: nextKey() });

describe('ACP over MCP takes the same', () => {
  it('Germany with Express: the same totals as ACP REST and REST; an invalid address is not ready, naming the field', async () => {
    const created = await callAcpTool('create_checkout_session', { meta: meta(), payload: createBody('eur', BERLIN) });
    expect(created.isError).toBe(false);
    expect(created.body.fulfillment_options.map((option: any) => option.id)).toEqual(['standard', 'express']);
    const chosen = await callAcpTool('update_checkout_session', {
      meta: meta(),
      id: created.body.id,
      payload: selectOption(created.body, 'express'),
    });
    expect(chosen.isError).toBe(false);
    expect(acpFigures(chosen.body)).toEqual({
      subtotal: 1451,
      discount: 0,
      shipping: 1495,
      taxes: [471],
      tax: 471,
      total: 2946,
    });
    const rest = await createdSession(api, {
      items: [{ id: TWO_PACK, quantity: 1 }],
      region_id: 'reg_eu',
      shipping_address: {
        recipient_name: 'Erika',
        line1: 'Friedrichstraße 43',
        city: 'Berlin',
        postal_code: '10117',
        country: 'DE',
      },
      shipping_option: 'express',
    });
    expect(acpFigures(chosen.body)).toEqual(restFigures(rest));
    expect((await read(created.body.id)).body).toEqual(chosen.body);

    const refused = await callAcpTool('update_checkout_session', {
      meta: meta(),
      id: created.body.id,
      payload: { fulfillment_details: { address: { ...BERLIN, state: 'ZZ' } } },
    });
    expect(refused.isError).toBe(false);
    expect(refused.body.status).toBe('not_ready_for_payment');
    expect(refused.body.messages).toContainEqual(
      expect.objectContaining({ type: 'error', code: 'invalid', param: '$.fulfillment_details.address.state' }),
    );
    expect((await read(created.body.id)).body).toEqual(chosen.body);

    const bad = await callAcpTool('create_checkout_session', {
      meta: meta(),
      payload: createBody('eur', { ...BERLIN, country: 'XX' }),
    });
    expect(bad.body.status).toBe('not_ready_for_payment');
    expect(bad.body.messages).toContainEqual(
      expect.objectContaining({ type: 'error', param: '$.fulfillment_details.address.country' }),
    );
  });
});
