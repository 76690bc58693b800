// The checkout MCP server driven by the SDK client over real HTTP: sessions created, read and cancelled through MCP
// are the sessions the REST API shows, the payment is always left to a human, and bad input is an isError result.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool, connectMcp, contractShape, schemaShape } from './support/mcp.js';
import { payWithTestProcessor } from './support/payments.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let checkout: Client;
let catalog: Client;
beforeAll(async () => {
  api = await startTestService({ env: { BASE_URL: 'https://store.example' } });
  checkout = await connectMcp(api, '/checkout/mcp');
  catalog = await connectMcp(api, '/catalog/mcp');
});
afterAll(async () => {
  await checkout?.close();
  await catalog?.close();
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

/** Words that send someone to pay: right for an open session, wrong once it is paid or cancelled. */
const PAY_INSTRUCTION = /send the buyer|must (open|pay)|share that link|to pay\b/i;

const cartCount = async () => Number((await api.service.deps.db('carts').count({ n: '*' }))[0]!.n);

/** Calls a checkout tool that must succeed; the first text block is the session's JSON, the second the next step. */
async function session(name: string, args: Record<string, unknown>): Promise<{ session: any; next: string }> {
  const outcome = await callTool(checkout, name, args);
  expect(outcome.isError, outcome.texts.join('\n')).toBe(false);
  expect(JSON.parse(outcome.texts[0]!)).toEqual(outcome.structured);
  expect(outcome.texts).toHaveLength(2);
  return { session: outcome.structured, next: outcome.texts[1]! };
}

/** Calls a tool that must fail as a tool result: no structured content, a message naming the argument. */
async function failure(name: string, args: Record<string, unknown>, argument: string): Promise<void> {
  const outcome = await callTool(checkout, name, args);
  expect(outcome.isError).toBe(true);
  expect(outcome.structured).toBeUndefined();
  expect(outcome.texts.join('\n')).toContain(argument);
}

async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const init: RequestInit =
    body === undefined
      ? { method }
      : { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
  const response = await api.http(path, init);
  return { status: response.status, body: await response.json() };
}

/** A session without what differs between two carts built from the same request: their ids. */
function withoutIds(value: any): unknown {
  const { id: _id, payment_provider, line_items, ...rest } = value;
  return {
    ...rest,
    line_items: line_items.map(({ id: _line, ...line }: any) => line),
    payment_provider: { ...payment_provider, checkout_url: undefined },
  };
}

describe('tools/list', () => {
  it('offers create, get, update and cancel with their annotations, and no tool that pays', async () => {
    const { tools } = await checkout.listTools();
    expect(tools.map((tool) => [tool.name, tool.annotations?.readOnlyHint, tool.annotations?.destructiveHint])).toEqual(
      [
        ['create_checkout_session', false, false],
        ['get_checkout_session', true, false],
        ['update_checkout_session', false, false],
        ['cancel_checkout_session', false, true],
      ],
    );
    for (const tool of tools) {
      expect(tool.title).toBeTruthy();
      expect(tool.description!.length).toBeGreaterThan(40);
      expect(schemaShape(tool.outputSchema!)).toEqual(contractShape('CheckoutSession'));
    }
  });

  it('takes the REST request body, plus idempotency_key, as the arguments of create_checkout_session', async () => {
    const { tools } = await checkout.listTools();
    const create = tools.find((tool) => tool.name === 'create_checkout_session')!;
    const body = contractShape('CheckoutSessionCreateRequest') as { properties: Record<string, unknown> };
    expect(schemaShape(create.inputSchema)).toEqual({
      ...body,
      properties: { ...body.properties, idempotency_key: 'scalar' },
    });
    expect(Object.keys(create.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['items', 'promo_codes', 'region_id', 'buyer']),
    );
  });
});

describe('create_checkout_session', () => {
  it('honours idempotency_key as REST honours Idempotency-Key, sharing its keys', async () => {
    const args = { items: [{ id: TRAVEL, quantity: 2 }] };
    const key = `mcp-key-${Date.now()}`;
    const { session: first } = await session('create_checkout_session', { ...args, idempotency_key: key });
    const { session: again } = await session('create_checkout_session', { ...args, idempotency_key: key });
    expect(again).toEqual(first);
    const overRest = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(args),
    });
    expect(overRest.headers.get('idempotent-replayed')).toBe('true');
    expect(((await overRest.json()) as any).id).toBe(first.id);
    await failure('create_checkout_session', { items: [{ id: TWO_PACK }], idempotency_key: key }, 'idempotency_key');
    expect(Number((await api.service.deps.db('carts').where({ id: first.id }).count({ n: '*' }))[0]!.n)).toBe(1);
  });

  it('shows a paid session as completed with its order', async () => {
    const { session: created } = await session('create_checkout_session', { items: [{ id: TRAVEL }] });
    await payWithTestProcessor(api, created.id);
    const { session: paid, next } = await session('get_checkout_session', { id: created.id });
    expect(paid).toMatchObject({
      status: 'completed',
      order: { order_number: expect.stringMatching(/^SF-/), status: 'paid' },
      totals: created.totals,
    });
    expect(next).toMatch(/Paid/);
    expect(next).toContain(paid.order.permalink_url);
    for (const said of [JSON.stringify(paid), next]) expect(said).not.toMatch(PAY_INSTRUCTION);
  });

  it('creates the session REST then shows, with the hand-off to a human in plain words', async () => {
    const { session: created, next } = await session('create_checkout_session', {
      items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }],
      promo_codes: ['10off'],
    });
    expect(created).toMatchObject({
      object: 'checkout_session',
      status: 'ready_for_payment',
      currency: 'usd',
      promo_codes: ['10OFF'],
    });
    expect(created.totals.total).toEqual({ amount: 44.37, currency: 'usd' });
    expect(created.payment_provider).toMatchObject({
      provider: 'human_handoff',
      checkout_url: `https://store.example/pay/${created.id}`,
    });
    expect(next).toContain(created.payment_provider.checkout_url);
    expect(next).toMatch(/a human must/i);
    expect(next).toMatch(/nothing has been charged/i);
    const shown = await rest('GET', `/checkout_sessions/${created.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(created);
  });

  it('prices exactly as POST /checkout-sessions does for the same body', async () => {
    const body = {
      items: [{ sku: 'TS-316L-2PK-TC', quantity: 3 }, { handle: 'tongue-scraper-2-pack' }],
      promo_code: '10OFF',
      region_id: 'reg_eu',
      buyer: { email: 'shopper@example.com' },
    };
    const viaRest = await rest('POST', '/checkout-sessions', body);
    expect(viaRest.status).toBe(201);
    const { session: viaMcp } = await session('create_checkout_session', body);
    expect(viaMcp.id).not.toBe(viaRest.body.id);
    expect(withoutIds(viaMcp)).toEqual(withoutIds(viaRest.body));
    expect(viaMcp.currency).toBe('eur');
  });

  it('reports a code that does not apply in messages, as REST does', async () => {
    const { session: created } = await session('create_checkout_session', {
      items: [{ id: TWO_PACK }],
      coupon_codes: ['NOPE'],
    });
    expect(created.promo_codes).toEqual([]);
    expect(created.messages).toEqual([
      expect.objectContaining({ code: 'promo_code_invalid', param: 'promo_codes[0]' }),
    ]);
  });

  it('charges shipping and tax exactly as get_store_policies states them', async () => {
    const policies = await callTool(catalog, 'get_store_policies', { region_id: 'reg_gb' });
    const { shipping, tax } = policies.structured.regions[0];
    const below = (await session('create_checkout_session', { items: [{ id: TWO_PACK }], region_id: 'reg_gb' }))
      .session;
    expect(below.totals.subtotal.amount).toBeLessThan(shipping.free_shipping_threshold.amount);
    expect(below.totals.shipping).toEqual(shipping.flat_rate);
    expect(below.totals.tax.amount).toBe(Math.round(below.totals.subtotal.amount * tax.rate_percent) / 100);
    const above = (
      await session('create_checkout_session', { items: [{ id: TWO_PACK, quantity: 3 }], region_id: 'reg_gb' })
    ).session;
    expect(above.totals.subtotal.amount).toBeGreaterThanOrEqual(shipping.free_shipping_threshold.amount);
    expect(above.totals.shipping.amount).toBe(0);
  });

  it.each([
    [{ items: [{ id: 'variant_nope' }] }, 'items[0].id'],
    [{ items: [{ id: TWO_PACK, quantity: 0 }] }, 'items[0].quantity'],
    [{ items: [{ id: TWO_PACK, quantity: 101 }] }, 'items[0].quantity'],
    [{ items: [{ id: TWO_PACK, quantity: 1.5 }] }, 'items[0].quantity'],
    [{ items: [{ id: TRAVEL, quantity: 86 }] }, 'items[0].quantity'], // 85 in stock
    [
      {
        items: [
          { id: TWO_PACK, quantity: 60 },
          { sku: 'TS-316L-2PK', quantity: 60 },
        ],
      },
      'items[0].quantity',
    ],
    [{ items: [{ quantity: 1 }] }, 'items[0].id'],
    [{ items: [{ id: TWO_PACK, sku: 'TS-316L-2PK' }] }, 'items[0]'],
    [{ items: [] }, 'items'],
    [{}, 'items'],
    [{ items: [{ id: TWO_PACK }], region_id: 'reg_mars' }, 'region_id'],
    [{ items: [{ id: TWO_PACK }], buyer: { email: 'not-an-email' } }, 'buyer.email'],
    [{ items: [{ id: TWO_PACK }], payment_token: 'tok_123' }, 'payment_token'],
  ])('answers %j with an isError result naming %s, and creates no cart', async (args, argument) => {
    const before = await cartCount();
    await failure('create_checkout_session', args, argument);
    expect(await cartCount()).toBe(before);
  });
});

describe('get_checkout_session and cancel_checkout_session', () => {
  it('reads the session REST shows, re-priced, and cancels it for both surfaces', async () => {
    const { session: created } = await session('create_checkout_session', { items: [{ id: TRAVEL, quantity: 2 }] });
    const { session: read, next } = await session('get_checkout_session', { id: created.id });
    expect(read).toEqual(created);
    expect(next).toContain(created.payment_provider.checkout_url);

    const { session: cancelled, next: afterCancel } = await session('cancel_checkout_session', { id: created.id });
    expect(cancelled).toEqual({
      ...created,
      status: 'canceled',
      payment_provider: { ...created.payment_provider, note: expect.stringMatching(/can no longer be paid/) },
    });
    expect(afterCancel).toMatch(/canceled.*nothing was charged/i);
    expect(afterCancel).not.toContain(created.payment_provider.checkout_url);
    // Neither the session nor the words around it may still send the buyer to pay.
    for (const said of [JSON.stringify(cancelled), afterCancel]) expect(said).not.toMatch(PAY_INSTRUCTION);
    expect((await rest('GET', `/checkout_sessions/${created.id}`)).body).toEqual(cancelled);
    expect((await session('cancel_checkout_session', { id: created.id })).session).toEqual(cancelled);
  });

  it('shows a session cancelled through REST as cancelled', async () => {
    const created = await rest('POST', '/checkout_sessions', { items: [{ id: TWO_PACK }] });
    const cancelled = await rest('POST', `/checkout_sessions/${created.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect((await session('get_checkout_session', { id: created.body.id })).session).toEqual(cancelled.body);
  });

  it.each([
    ['get_checkout_session', { id: 'cart_doesnotexist' }, 'id'],
    ['cancel_checkout_session', { id: 'cart_doesnotexist' }, 'id'],
    ['get_checkout_session', {}, 'id'],
    ['cancel_checkout_session', { id: '' }, 'id'],
    ['get_checkout_session', { id: 'cart_x', session_id: 'cart_x' }, 'session_id'],
  ])('%s answers %j with an isError result naming %s', async (name, args, argument) => {
    await failure(name, args, argument);
  });
});
