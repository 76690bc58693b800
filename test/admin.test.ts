// The merchant's side (issue #35): admin clients made only by the operator's command, the /admin API's scope checks,
// and the order loop (paid, shipped, delivered; another cancelled and refunded), each change told to the agent once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/admin/commands.js';
import { createLogger } from '../src/log.js';
import { bearer, registerClient, requestToken, type RegisteredClient } from './support/agent.js';
import { payWithTestProcessor } from './support/payments.js';
import { contractFetch } from './support/contract.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let api: TestService;
let receiver: WebhookReceiver;
let agentTokenValue: string;
beforeAll(async () => {
  // Every spelling of an admin scope is a registration attempt: more than the default 20 an hour.
  api = await startTestService({ env: { REGISTRATIONS_PER_HOUR: '1000' } });
  receiver = await startWebhookReceiver();
  const agent = await registerClient(api, { scope: 'cart:write orders:read', webhook_url: receiver.url });
  receiver.secret = (agent as RegisteredClient & { webhook_secret: string }).webhook_secret;
  agentTokenValue = await requestToken(api, agent);
});
afterAll(async () => {
  await api?.close();
  await receiver?.close();
});

/** `npm run admin -- …` against the test service's database; its exit code and what it printed. */
async function admin(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const { db } = api.service.deps;
  const code = await runAdminCommand({ db, now: Date.now, log: createLogger('silent') }, argv, {
    out: (text) => (out += `${text}\n`),
    err: (text) => (err += `${text}\n`),
  });
  return { code, out, err };
}

/** A client the operator created with `scope`, its credentials as --json printed them. */
export async function adminClient(scope: string): Promise<RegisteredClient> {
  const { code, out } = await admin('clients', 'create', '--name', 'Back office', '--scope', scope, '--json');
  expect(code).toBe(0);
  return JSON.parse(out) as RegisteredClient;
}

describe('admin clients', () => {
  it('are created by the operator command, the secret shown once, and get admin tokens', async () => {
    const { code, out } = await admin(
      'clients',
      'create',
      '--name',
      'Back office',
      '--scope',
      'admin:promotions admin:orders',
      '--json',
    );
    expect(code).toBe(0);
    const client = JSON.parse(out) as RegisteredClient;
    expect(Object.keys(client).sort()).toEqual(['client_id', 'client_secret', 'scope']);
    expect(client).toMatchObject({
      scope: 'admin:orders admin:promotions',
      client_secret: expect.stringMatching(/^sfcs_/),
    });
    const row = await api.service.deps.db('oauth_clients').where({ id: client.client_id }).first();
    expect(row).toMatchObject({ name: 'Back office', scope: 'admin:orders admin:promotions' });
    expect(JSON.stringify(row)).not.toContain(client.client_secret);
    const token = await api.http('/oauth/token', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials&scope=admin:orders',
    });
    expect(token.status).toBe(200);
    expect(((await token.json()) as { scope: string }).scope).toBe('admin:orders');
  });

  it('prints a table without --json, and refuses bad usage and unknown scopes', async () => {
    const table = await admin('clients', 'create', '--name', 'Ops', '--scope', 'admin:catalog');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/client_secret +sfcs_/);
    expect(table.out).toContain('shown only this once');
    expect((await admin('clients', 'create', '--name', 'Ops', '--scope', 'admin:everything')).code).toBe(1);
    expect((await admin('clients', 'create', '--name', 'Ops', '--scope', '')).code).toBe(1);
    expect((await admin('clients', 'create', '--name', '  ', '--scope', 'admin:orders')).code).toBe(1);
    expect((await admin('clients', 'create', '--scope', 'admin:orders')).code).toBe(2);
    expect((await admin('clients', 'delete')).code).toBe(2);
    expect((await admin('clients', 'create', '--name', 'x', '--scope', 'admin:orders', '--bogus')).code).toBe(2);
  });

  it.each([
    'admin:orders',
    'admin:catalog',
    'admin:promotions',
    'ADMIN:ORDERS',
    'Admin:Orders',
    'catalog:read admin:orders',
    'admin:orders admin:orders',
    ' admin:orders ',
    'admin:orders\tcatalog:read',
    'admin:orders\ncatalog:read',
    'admin:orders,catalog:read',
    'admin',
    'admin:',
    'admin:*',
    'admin:orders:write',
    'admin:orders ',
    'admin%3Aorders',
    'admin:orders\u00a0',
    '\u0430dmin:orders',
  ])('open registration refuses the scope %j with invalid_scope', async (scope) => {
    const before = Number((await api.service.deps.db('oauth_clients').count({ n: '*' }))[0]!.n);
    const response = await api.http('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ scope }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_scope');
    expect(Number((await api.service.deps.db('oauth_clients').count({ n: '*' }))[0]!.n)).toBe(before);
  });

  it('never grants an admin scope to a registered client at the token endpoint', async () => {
    const client = await registerClient(api, { scope: 'catalog:read orders:read' });
    for (const scope of ['admin:orders', 'catalog:read admin:orders', 'ADMIN:ORDERS']) {
      const response = await api.http('/oauth/token', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
      });
      // Asked with a scope it has, it gets only that one (the intersection); asked for an admin scope alone, nothing.
      const body = (await response.json()) as { scope?: string; error?: string };
      if (scope.includes(' ')) expect(body.scope).toBe('catalog:read');
      else expect(body.error).toBe('invalid_scope');
    }
    expect(await requestToken(api, client)).toMatch(/^sfat_/);
  });
});

const VARIANT = 'variant_01tongue2pack';
let keyCounter = 0;
const newKey = () => `key-${Date.now()}-${++keyCounter}`;

async function call(method: string, path: string, init: { token?: string; body?: unknown; key?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (init.token) Object.assign(headers, bearer(init.token));
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  if ((method === 'POST' || method === 'PUT') && init.key !== null) headers['Idempotency-Key'] = init.key ?? newKey();
  const response = await api.http(path, {
    method,
    headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

/** An agent's cart of two 2-packs with 10OFF, checked out and paid in test mode; its order id. */
async function paidOrder(): Promise<string> {
  const cart = await call('POST', '/agent/carts', {
    token: agentTokenValue,
    key: null,
    body: { items: [{ id: VARIANT, quantity: 2 }], promo_codes: ['10OFF'] },
  });
  expect(cart.status).toBe(201);
  expect(
    (await call('POST', `/agent/carts/${cart.body.id}/checkout-session`, { token: agentTokenValue, key: null })).status,
  ).toBe(201);
  await payWithTestProcessor(api, cart.body.id);
  const session = await call('GET', `/checkout_sessions/${cart.body.id}`);
  return session.body.order.id as string;
}

const stock = async () =>
  (await api.service.deps.db('variants').where({ id: VARIANT }).first()).inventory_quantity as number;
const redeemed = async () =>
  (await api.service.deps.db('promotions').where({ code: '10OFF' }).first()).times_redeemed as number;
const auditCount = async () => Number((await api.service.deps.db('audit_events').count({ n: '*' }))[0]!.n);

/** The events the agent received for `orderId`, once the outbox has delivered `count` of them. */
async function eventsOf(orderId: string, count: number) {
  const deadline = Date.now() + 60_000;
  let events = receiver.received.filter((event) => event.body.data.order.id === orderId);
  while (events.length < count && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    events = receiver.received.filter((event) => event.body.data.order.id === orderId);
  }
  return events;
}

describe('the admin order loop', () => {
  let admin: string;
  beforeAll(async () => {
    admin = await requestToken(api, await adminClient('admin:orders'));
  });

  it('ships an order in two parts, delivers it, and tells the agent of each change once', async () => {
    const id = await paidOrder();
    const read = await call('GET', `/admin/orders/${id}`, { token: admin });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      status: 'paid',
      fulfilment_status: 'unfulfilled',
      shipments: [],
      refunds: [],
      history: [],
    });
    const line = read.body.line_items[0];
    expect(line).toMatchObject({ variant_id: VARIANT, quantity: 2, quantity_shipped: 0 });

    const part = await call('POST', `/admin/orders/${id}/shipments`, {
      token: admin,
      body: {
        carrier: 'UPS',
        tracking_number: '1Z999',
        tracking_url: 'https://ups.example/1Z999',
        line_items: [{ line_id: line.id, quantity: 1 }],
      },
    });
    expect(part.status).toBe(200);
    expect(part.body).toMatchObject({ fulfilment_status: 'partially_shipped', line_items: [{ quantity_shipped: 1 }] });
    const early = await call('POST', `/admin/orders/${id}/deliver`, { token: admin });
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({
      error: 'order_transition_refused',
      status: 'paid',
      fulfilment_status: 'partially_shipped',
    });

    const rest = await call('POST', `/admin/orders/${id}/shipments`, {
      token: admin,
      body: { carrier: 'DHL', tracking_number: 'JD01' },
    });
    expect(rest.body).toMatchObject({ fulfilment_status: 'shipped', line_items: [{ quantity_shipped: 2 }] });
    expect(rest.body.shipments).toHaveLength(2);
    const delivered = await call('POST', `/admin/orders/${id}/deliver`, {
      token: admin,
      body: { reason: 'signed for' },
    });
    expect(delivered.body.fulfilment_status).toBe('delivered');
    expect(delivered.body.shipments.every((shipment: any) => shipment.delivered_at !== null)).toBe(true);
    expect(delivered.body.history.map((event: any) => event.operation)).toEqual([
      'createOrderShipment',
      'createOrderShipment',
      'markOrderDelivered',
    ]);

    const cancel = await call('POST', `/admin/orders/${id}/cancel`, { token: admin });
    expect(cancel.status).toBe(409);
    expect(cancel.body).toMatchObject({ status: 'paid', fulfilment_status: 'delivered' });
    expect(cancel.body.error_description).toContain('delivered');

    const events = await eventsOf(id, 4);
    expect(events.map((event) => event.type).sort()).toEqual([
      'order.created',
      'order.updated',
      'order.updated',
      'order.updated',
    ]);
    expect(new Set(events.map((event) => event.id)).size).toBe(4);
    expect(events.every((event) => event.signatureValid)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.received.filter((event) => event.body.data.order.id === id)).toHaveLength(4);
  });

  it('cancels an unshipped order: refunded, stock back, promotion released, recorded once under its key', async () => {
    const before = { stock: await stock(), redeemed: await redeemed() };
    const id = await paidOrder();
    expect(await stock()).toBe(before.stock - 2);
    expect(await redeemed()).toBe(before.redeemed + 1);
    const key = newKey();
    const cancel = await call('POST', `/admin/orders/${id}/cancel`, {
      token: admin,
      key,
      body: { reason: 'buyer asked' },
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ status: 'canceled', fulfilment_status: 'unfulfilled' });
    expect(cancel.body.payments[0].amount_refunded).toBe(cancel.body.payments[0].amount);
    expect(cancel.body.refunds).toMatchObject([
      { restocked: true, processor_reference: expect.stringMatching(/^test_refund_/) },
    ]);
    expect(await stock()).toBe(before.stock);
    expect(await redeemed()).toBe(before.redeemed);

    const replay = await call('POST', `/admin/orders/${id}/cancel`, {
      token: admin,
      key,
      body: { reason: 'buyer asked' },
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(cancel.body);
    const conflict = await call('POST', `/admin/orders/${id}/cancel`, { token: admin, key, body: { reason: 'other' } });
    expect(conflict.status).toBe(422);
    expect(await stock()).toBe(before.stock);

    const refund = await call('POST', `/admin/orders/${id}/refunds`, { token: admin });
    expect(refund.status).toBe(409);
    expect(refund.body).toMatchObject({ error: 'order_transition_refused', status: 'canceled' });
    const agentView = await call('GET', `/agent/orders/${id}`, { token: agentTokenValue });
    expect(agentView.body.status).toBe('canceled');
    const events = await eventsOf(id, 2);
    // Deliveries to one endpoint run side by side: their order is not the order of the changes.
    expect(events.map((event) => event.type).sort()).toEqual(['order.created', 'order.updated']);
    expect(events.find((event) => event.type === 'order.updated')!.body.data.order.status).toBe('canceled');
  });

  it('refunds partly with a restock, then the rest; never more than was paid', async () => {
    const id = await paidOrder();
    const start = await stock();
    const read = await call('GET', `/admin/orders/${id}`, { token: admin });
    const line = read.body.line_items[0];
    const paid = read.body.payments[0].amount as number;
    const tooMuch = await call('POST', `/admin/orders/${id}/refunds`, { token: admin, body: { amount: paid + 1 } });
    expect(tooMuch).toMatchObject({ status: 400, body: { error: 'invalid_request', param: 'amount' } });
    const part = await call('POST', `/admin/orders/${id}/refunds`, {
      token: admin,
      body: { amount: 100, reason: 'scratched', restock: [{ line_id: line.id, quantity: 1 }] },
    });
    expect(part.status).toBe(200);
    expect(part.body).toMatchObject({ status: 'partially_refunded', line_items: [{ quantity_restocked: 1 }] });
    expect(await stock()).toBe(start + 1);
    const overRestock = await call('POST', `/admin/orders/${id}/refunds`, {
      token: admin,
      body: { amount: 1, restock: [{ line_id: line.id, quantity: 2 }] },
    });
    expect(overRestock).toMatchObject({ status: 400, body: { param: 'restock[0].quantity' } });
    const rest = await call('POST', `/admin/orders/${id}/refunds`, { token: admin });
    expect(rest.body).toMatchObject({ status: 'refunded' });
    expect(rest.body.payments[0].amount_refunded).toBe(paid);
    expect(rest.body.refunds.map((refund: any) => refund.amount)).toEqual([100, paid - 100]);
    expect(await stock()).toBe(start + 1);
  });

  it('lists orders by status, fulfilment and creation time, a page at a time, and the audit trail with filters', async () => {
    const all = await call('GET', '/admin/orders?limit=100', { token: admin });
    expect(all.status).toBe(200);
    expect(all.body.data.length).toBeGreaterThanOrEqual(3);
    const first = await call('GET', '/admin/orders?limit=1', { token: admin });
    expect(first.body.data).toHaveLength(1);
    const second = await call('GET', `/admin/orders?limit=1&cursor=${first.body.next_cursor}`, { token: admin });
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(second.body.data[0].id).toBe(all.body.data[1].id);
    const canceled = await call('GET', '/admin/orders?status=canceled', { token: admin });
    expect(canceled.body.data.length).toBeGreaterThan(0);
    expect(canceled.body.data.every((order: any) => order.status === 'canceled')).toBe(true);
    const delivered = await call('GET', '/admin/orders?fulfilment_status=delivered&fulfilment_status=shipped', {
      token: admin,
    });
    expect(delivered.body.data.every((order: any) => ['delivered', 'shipped'].includes(order.fulfilment_status))).toBe(
      true,
    );
    const future = await call(
      'GET',
      `/admin/orders?created_from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`,
      { token: admin },
    );
    expect(future.body).toEqual({ object: 'list', data: [], next_cursor: null });
    const badCursor = await call('GET', '/admin/orders?cursor=nonsense', { token: admin });
    expect(badCursor).toMatchObject({ status: 400, body: { param: 'cursor' } });

    const audit = await call('GET', '/admin/audit?operation=cancelAdminOrder', { token: admin });
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({
      operation: 'cancelAdminOrder',
      target_type: 'order',
      before: { status: 'paid', fulfilment_status: 'unfulfilled' },
      after: { status: 'canceled' },
    });
    const page = await call('GET', '/admin/audit?limit=2', { token: admin });
    expect(page.body.data).toHaveLength(2);
    expect(page.body.next_cursor).toEqual(expect.any(String));
  });
});

describe('admin scopes and hostile input', () => {
  const ORDER = 'order_doesnotexist';
  const operations: Array<[string, string, unknown?]> = [
    ['GET', '/admin/orders'],
    ['GET', `/admin/orders/${ORDER}`],
    ['POST', `/admin/orders/${ORDER}/shipments`, { carrier: 'UPS', tracking_number: '1' }],
    ['POST', `/admin/orders/${ORDER}/deliver`],
    ['POST', `/admin/orders/${ORDER}/cancel`],
    ['POST', `/admin/orders/${ORDER}/refunds`],
    ['GET', '/admin/audit'],
  ];

  it.each(operations)(
    '%s %s needs a token with admin:orders, and a refusal records nothing',
    async (method, path, body) => {
      const before = await auditCount();
      const none = await call(method, path, { body });
      expect(none.status).toBe(401);
      const catalog = await requestToken(api, await adminClient('admin:catalog admin:promotions'));
      for (const token of [catalog, agentTokenValue]) {
        const refused = await call(method, path, { token, body });
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ error: 'insufficient_scope', scope: 'admin:orders' });
      }
      expect(await auditCount()).toBe(before);
    },
  );

  it('refuses hostile bodies with 400 and changes nothing', async () => {
    const token = await requestToken(api, await adminClient('admin:orders'));
    const id = await paidOrder();
    const line = (await call('GET', `/admin/orders/${id}`, { token })).body.line_items[0];
    const before = await auditCount();
    const hostile: Array<[string, unknown]> = [
      ['shipments', {}],
      ['shipments', { carrier: '', tracking_number: '1' }],
      ['shipments', { carrier: 'x'.repeat(101), tracking_number: '1' }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', tracking_url: 'javascript:alert(1)' }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', tracking_url: 'http://plain.example' }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', line_items: [] }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', line_items: [{ line_id: line.id, quantity: 0 }] }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', line_items: [{ line_id: line.id, quantity: 3 }] }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', line_items: [{ line_id: line.id, quantity: 1.5 }] }],
      ['shipments', { carrier: 'UPS', tracking_number: '1', line_items: [{ line_id: 'nope', quantity: 1 }] }],
      [
        'shipments',
        {
          carrier: 'UPS',
          tracking_number: '1',
          line_items: [
            { line_id: line.id, quantity: 1 },
            { line_id: line.id, quantity: 1 },
          ],
        },
      ],
      ['shipments', { carrier: 'UPS', tracking_number: '1', admin: true }],
      ['shipments', '{"carrier":'],
      ['shipments', [1, 2]],
      ['refunds', { amount: -1 }],
      ['refunds', { amount: 0 }],
      ['refunds', { amount: '100' }],
      ['refunds', { amount: 1e20 }],
      ['refunds', { restock: [{ line_id: line.id, quantity: -1 }] }],
      ['refunds', { status: 'refunded' }],
      ['cancel', { reason: 'x'.repeat(501) }],
      ['cancel', { reason: 1 }],
      ['deliver', { __proto__: { a: 1 }, extra: 1 }],
    ];
    for (const [action, body] of hostile) {
      const answer = await call('POST', `/admin/orders/${id}/${action}`, { token, body });
      expect(answer.status, `${action} ${JSON.stringify(body)}`).toBe(400);
      expect(answer.body.error).toBe('invalid_request');
    }
    const noKey = await call('POST', `/admin/orders/${id}/cancel`, { token, key: null });
    expect(noKey).toMatchObject({ status: 400, body: { param: 'Idempotency-Key' } });
    const after = await call('GET', `/admin/orders/${id}`, { token });
    expect(after.body).toMatchObject({
      status: 'paid',
      fulfilment_status: 'unfulfilled',
      shipments: [],
      refunds: [],
      history: [],
    });
    expect(await auditCount()).toBe(before);
  });
});

describe('admin catalogue changes', () => {
  let catalog: string;
  beforeAll(async () => {
    catalog = await requestToken(api, await adminClient('admin:catalog'));
  });
  const TEST_VARIANT = 'variant_01tonguetravel';

  it('sets stock, and adjusts it atomically under concurrent requests, never below zero', async () => {
    const set = await call('POST', `/admin/variants/${TEST_VARIANT}/stock`, { token: catalog, body: { quantity: 5 } });
    expect(set).toMatchObject({ status: 200, body: { variant_id: TEST_VARIANT, inventory_quantity: 5 } });
    const takes = await Promise.all(
      Array.from({ length: 8 }, () =>
        call('POST', `/admin/variants/${TEST_VARIANT}/stock`, { token: catalog, body: { adjustment: -1 } }),
      ),
    );
    expect(takes.filter((take) => take.status === 200)).toHaveLength(5);
    const refused = takes.filter((take) => take.status === 409);
    expect(refused).toHaveLength(3);
    expect(refused[0]!.body.error).toBe('stock_would_go_negative');
    expect((await api.service.deps.db('variants').where({ id: TEST_VARIANT }).first()).inventory_quantity).toBe(0);
    const audit = await call('GET', `/admin/audit?operation=adjustVariantStock&target_id=${TEST_VARIANT}&limit=100`, {
      token: await requestToken(api, await adminClient('admin:orders')),
    });
    expect(audit.body.data).toHaveLength(6); // the set and the five adjustments; the refusals recorded nothing
    const back = await call('POST', `/admin/variants/${TEST_VARIANT}/stock`, {
      token: catalog,
      body: { adjustment: 240, reason: 'delivery from the supplier' },
    });
    expect(back.body.inventory_quantity).toBe(240);
  });

  it('sets prices per region, replays under its key, and refuses unknown regions', async () => {
    const key = newKey();
    const body = { prices: [{ region_id: 'reg_us', amount: 1599 }] };
    const set = await call('PUT', `/admin/variants/${TEST_VARIANT}/prices`, { token: catalog, key, body });
    expect(set.status).toBe(200);
    expect(set.body.prices).toContainEqual({ region_id: 'reg_us', amount: 1599, currency: 'usd' });
    const replay = await call('PUT', `/admin/variants/${TEST_VARIANT}/prices`, { token: catalog, key, body });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const row = await api.service.deps
      .db('variant_prices')
      .where({ variant_id: TEST_VARIANT, region_id: 'reg_us' })
      .first();
    expect(row.amount).toBe(1599);
    const unknown = await call('PUT', `/admin/variants/${TEST_VARIANT}/prices`, {
      token: catalog,
      body: {
        prices: [
          { region_id: 'reg_us', amount: 1 },
          { region_id: 'reg_mars', amount: 1 },
        ],
      },
    });
    expect(unknown).toMatchObject({ status: 400, body: { param: 'prices[1].region_id' } });
    expect(
      (await api.service.deps.db('variant_prices').where({ variant_id: TEST_VARIANT, region_id: 'reg_us' }).first())
        .amount,
    ).toBe(1599);
    const missing = await call('PUT', '/admin/variants/variant_nope/prices', { token: catalog, body });
    expect(missing.status).toBe(404);
  });

  it.each([
    ['POST', 'stock', { adjustment: 1 }],
    ['PUT', 'prices', { prices: [{ region_id: 'reg_us', amount: 1 }] }],
  ])('%s …/%s needs admin:catalog', async (method, action, body) => {
    const orders = await requestToken(api, await adminClient('admin:orders admin:promotions'));
    expect((await call(method, `/admin/variants/${TEST_VARIANT}/${action}`, { body })).status).toBe(401);
    for (const token of [orders, agentTokenValue]) {
      const refused = await call(method, `/admin/variants/${TEST_VARIANT}/${action}`, { token, body });
      expect(refused).toMatchObject({ status: 403, body: { scope: 'admin:catalog' } });
    }
  });

  it('refuses hostile bodies with 400 and changes nothing', async () => {
    const before = await auditCount();
    const hostile: Array<[string, string, unknown]> = [
      ['POST', 'stock', {}],
      ['POST', 'stock', { quantity: 1, adjustment: 1 }],
      ['POST', 'stock', { quantity: -1 }],
      ['POST', 'stock', { quantity: 1.5 }],
      ['POST', 'stock', { adjustment: 1e12 }],
      ['POST', 'stock', { adjustment: '1' }],
      ['POST', 'stock', { reason: 'only a reason' }],
      ['POST', 'stock', { inventory_quantity: 5 }],
      ['PUT', 'prices', {}],
      ['PUT', 'prices', { prices: [] }],
      ['PUT', 'prices', { prices: [{ region_id: 'reg_us', amount: 0 }] }],
      ['PUT', 'prices', { prices: [{ region_id: 'reg_us', amount: -5 }] }],
      ['PUT', 'prices', { prices: [{ region_id: 'reg_us', amount: 10.5 }] }],
      [
        'PUT',
        'prices',
        {
          prices: [
            { region_id: 'reg_us', amount: 1 },
            { region_id: 'reg_us', amount: 2 },
          ],
        },
      ],
      ['PUT', 'prices', { prices: [{ region_id: 'reg_us' }] }],
      ['PUT', 'prices', '[{"region_id":'],
    ];
    for (const [method, action, body] of hostile) {
      const answer = await call(method, `/admin/variants/${TEST_VARIANT}/${action}`, { token: catalog, body });
      expect(answer.status, `${action} ${JSON.stringify(body)}`).toBe(400);
    }
    expect(await auditCount()).toBe(before);
  });
});

describe('the CLI orders commands, through the generated SDK', () => {
  it('list, show, ship, deliver, cancel and refund from the command line', async () => {
    const client = await adminClient('admin:orders');
    const access = {
      baseUrl: api.url,
      clientId: client.client_id,
      clientSecret: client.client_secret,
      fetch: contractFetch,
    };
    const run = async (...argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runAdminCommand(access, argv, {
        out: (text) => (out += text),
        err: (text) => (err += text),
      });
      return { code, out, err };
    };
    const shipped = await paidOrder();
    const canceled = await paidOrder();
    const list = await run('orders', 'list', '--status', 'paid', '--fulfilment-status', 'unfulfilled', '--json');
    expect(list.code).toBe(0);
    expect((JSON.parse(list.out).data as Array<{ id: string }>).map((order) => order.id)).toEqual(
      expect.arrayContaining([shipped, canceled]),
    );
    expect((await run('orders', 'list')).out).toContain(shipped);
    const ship = await run('orders', 'ship', shipped, '--carrier', 'UPS', '--tracking-number', '1Z1', '--json');
    expect(ship.code).toBe(0);
    expect(JSON.parse(ship.out).fulfilment_status).toBe('shipped');
    expect((await run('orders', 'deliver', shipped)).out).toContain('delivered');
    const show = await run('orders', 'show', shipped);
    expect(show.out).toMatch(/shipment UPS 1Z1 \(delivered\)/);
    const before = await stock();
    expect((await run('orders', 'cancel', canceled, '--json')).code).toBe(0);
    expect(await stock()).toBe(before + 2);
    const again = await run('orders', 'refund', canceled, '--amount', '1');
    expect(again.code).toBe(1);
    expect(again.err).toContain('order_transition_refused');
    expect((await run('orders', 'fly', shipped)).code).toBe(2);
  });
});

describe('admin promotions', () => {
  it('lists promotions with redemption counts and expires one, once under its key; needs admin:promotions', async () => {
    const token = await requestToken(api, await adminClient('admin:promotions'));
    const list = await call('GET', '/admin/promotions', { token });
    expect(list.status).toBe(200);
    const tenOff = list.body.data.find((promotion: any) => promotion.code === '10OFF');
    expect(tenOff.times_redeemed).toBe(await redeemed());
    const key = newKey();
    const expired = await call('POST', '/admin/promotions/welcome5/expire', { token, key });
    expect(expired.status).toBe(200);
    expect(expired.body).toMatchObject({ code: 'WELCOME5', ends_at: expect.any(String) });
    const replay = await call('POST', '/admin/promotions/WELCOME5/expire', { token, key });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const again = await call('POST', '/admin/promotions/WELCOME5/expire', { token });
    expect(again.body.ends_at).toBe(expired.body.ends_at);
    expect((await call('POST', '/admin/promotions/NOPE/expire', { token })).status).toBe(404);
    const row = await api.service.deps.db('promotions').where({ code: 'WELCOME5' }).first();
    expect(new Date(row.ends_at).toISOString()).toBe(expired.body.ends_at);
    const orders = await requestToken(api, await adminClient('admin:orders admin:catalog'));
    for (const [method, path] of [
      ['GET', '/admin/promotions'],
      ['POST', '/admin/promotions/10OFF/expire'],
    ] as const) {
      expect((await call(method, path)).status).toBe(401);
      expect(await call(method, path, { token: orders })).toMatchObject({
        status: 403,
        body: { scope: 'admin:promotions' },
      });
    }
    expect(list.body.data.find((promotion: any) => promotion.code === '10OFF').ends_at).toBeNull();
  });
});
