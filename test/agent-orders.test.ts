// Agents and their orders: an agent's cart becomes a checkout session, a human pays it, and the agent reads the order
// (scope orders:read, its own carts only) and is told through its signed webhook, with retries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRefund } from '../src/services/orders.js';
import { bearer, registerClient, requestToken, type RegisteredClient } from './support/agent.js';
import { payWithTestProcessor } from './support/payments.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

let api: TestService;
let receiver: WebhookReceiver;
let client: RegisteredClient & { webhook_url?: string; webhook_secret?: string };
let token: string;
beforeAll(async () => {
  api = await startTestService();
  receiver = await startWebhookReceiver();
  client = await registerClient(api, { scope: 'cart:write orders:read', webhook_url: receiver.url });
  receiver.secret = client.webhook_secret!;
  token = await requestToken(api, client);
});
afterAll(async () => {
  await api?.close();
  await receiver?.close();
});

async function agentCall(method: string, path: string, body?: unknown, auth = token) {
  const response = await api.http(path, {
    method,
    headers: { ...bearer(auth), ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any };
}

/** An agent cart checked out and paid by a human; returns the paid session. */
async function paidAgentSession(auth = token): Promise<any> {
  const cart = await agentCall(
    'POST',
    '/agent/carts',
    { items: [{ id: 'variant_01tongue2pack', quantity: 2 }], promo_codes: ['10OFF'] },
    auth,
  );
  expect(cart.status).toBe(201);
  expect((await agentCall('POST', `/agent/carts/${cart.body.id}/checkout-session`, undefined, auth)).status).toBe(201);
  await payWithTestProcessor(api, cart.body.id);
  return (await api.http(`/checkout_sessions/${cart.body.id}`).then((response) => response.json())) as any;
}

describe('registration with a webhook', () => {
  it('returns the URL and a signing secret once, and advertises the orders:read scope', async () => {
    expect(client).toMatchObject({
      scope: 'cart:write orders:read',
      webhook_url: receiver.url,
      webhook_secret: expect.stringMatching(/^sfwh_/),
    });
    const metadata = (await api
      .http('/.well-known/oauth-authorization-server')
      .then((response) => response.json())) as any;
    expect(metadata.scopes_supported).toContain('orders:read');
  });

  it('refuses a webhook URL that is not https (except to a host named in EGRESS_ALLOWED_HOSTS)', async () => {
    for (const webhook_url of [
      'http://agent.example/hooks',
      'ftp://agent.example/hooks',
      'not a url',
      'https://user:pw@agent.example/',
    ]) {
      const response = await api.http('/oauth/register', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ scope: 'orders:read', webhook_url }),
      });
      expect(response.status, webhook_url).toBe(400);
      expect(await response.json()).toMatchObject({ error: 'invalid_client_metadata' });
    }
  });
});

describe('GET /agent/orders/{id}', () => {
  it("shows the client's order as charged", async () => {
    const session = await paidAgentSession();
    const order = await agentCall('GET', `/agent/orders/${session.order.id}`);
    expect(order.status).toBe(200);
    expect(order.body).toMatchObject({
      id: session.order.id,
      object: 'order',
      order_number: session.order.order_number,
      checkout_session_id: session.id,
      status: 'paid',
      review_reasons: [],
      currency: 'usd',
      totals: session.totals,
      line_items: session.line_items,
      promo_codes: ['10OFF'],
      amount_paid: session.totals.total,
      amount_refunded: { amount: 0, currency: 'usd' },
      permalink_url: session.order.permalink_url,
    });
    expect((await agentCall('GET', `/agent/carts/${session.id}`)).body.status).toBe('completed');
  });

  it("answers 404 for another client's order and 403 without orders:read", async () => {
    const session = await paidAgentSession();
    const other = await requestToken(api, await registerClient(api, { scope: 'cart:write orders:read' }));
    expect((await agentCall('GET', `/agent/orders/${session.order.id}`, undefined, other)).status).toBe(404);
    const cartOnly = await requestToken(api, client, 'cart:write');
    const forbidden = await agentCall('GET', `/agent/orders/${session.order.id}`, undefined, cartOnly);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe('insufficient_scope');
  });
});

describe('order webhooks', () => {
  it('delivers order.created, signed, then order.updated on a refund, retrying a failing receiver', async () => {
    const flaky = await startWebhookReceiver();
    try {
      await deliveriesTo(flaky);
    } finally {
      await flaky.close();
    }
  });

  async function deliveriesTo(flaky: WebhookReceiver): Promise<void> {
    const registered = await registerClient(api, { scope: 'cart:write orders:read', webhook_url: flaky.url });
    flaky.secret = (registered as typeof client).webhook_secret!;
    flaky.refuseNext = 2;
    const session = await paidAgentSession(await requestToken(api, registered));
    const [created] = await flaky.waitFor(1);
    expect(created).toMatchObject({ type: 'order.created', signatureValid: true });
    expect(created!.headers['webhook-id']).toBe(created!.id);
    expect(created!.body.data.order).toMatchObject({
      id: session.order.id,
      status: 'paid',
      checkout_session_id: session.id,
    });
    const [row] = await api.service.deps.db('webhook_deliveries').where({ id: created!.id });
    expect(row.attempts).toBe(3);

    const order = (await api.service.deps.db('orders').where({ id: session.order.id }))[0];
    await recordRefund(api.service.deps, {
      processor: 'test',
      eventId: `evt_refund_${order.id}`,
      eventType: 'test.refund',
      paymentReference: order.payment_reference,
      amountRefunded: order.amount_paid,
    });
    const updates = (await flaky.waitFor(2)).filter((event) => event.type === 'order.updated');
    expect(updates).toHaveLength(1);
    expect(updates[0]!.body.data.order).toMatchObject({ id: session.order.id, status: 'refunded' });
    expect(updates[0]!.signatureValid).toBe(true);
  }

  it('writes no event for public sessions or clients without a webhook', async () => {
    const quiet = await requestToken(api, await registerClient(api, { scope: 'cart:write orders:read' }));
    const before = Number((await api.service.deps.db('webhook_deliveries').count({ n: '*' }))[0]!.n);
    await paidAgentSession(quiet);
    expect(Number((await api.service.deps.db('webhook_deliveries').count({ n: '*' }))[0]!.n)).toBe(before);
  });
});
