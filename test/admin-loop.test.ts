// The merchant's loop end to end (issue #35): driven from the command line (`npm run admin -- …` as a child process,
// through the generated SDK) against a running service, seen from the buyer's side (GET /agent/orders/{id}, the receipt
// page, the checkout session's order); a refund that arrives from Stripe; and, on PostgreSQL, every admin event
// delivered to the agent's webhook once by two instances sharing one database.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerClient, requestToken, type RegisteredClient } from './support/agent.js';
import { adminCall, adminClient, adminToken } from './support/admin.js';
import { createdSession } from './support/checkout.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
import { payWithTestProcessor } from './support/payments.js';
import { startTestService, type TestService } from './support/service.js';
import {
  paidCheckout,
  signedDelivery,
  startStripeService,
  stripeCheckoutFor,
  stripeEvent,
  type FakeStripe,
} from './support/stripe.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const VARIANT = 'variant_01tongue2pack';
/** Each command is a new Node process compiling the CLI (tsx): seconds apiece on a busy machine. */
const CLI_TEST_TIMEOUT_MS = 300_000;

/** An agent with a webhook, its token and the receiver its events arrive at. */
async function agentWithWebhook(api: TestService): Promise<{ token: string; receiver: WebhookReceiver }> {
  const receiver = await startWebhookReceiver();
  const agent = await registerClient(api, { scope: 'cart:write orders:read', webhook_url: receiver.url });
  receiver.secret = (agent as RegisteredClient & { webhook_secret: string }).webhook_secret;
  return { token: await requestToken(api, agent), receiver };
}

/** An agent's cart of two 2-packs, checked out and paid in test mode; its order id and session id. */
async function paidOrder(api: TestService, token: string): Promise<{ id: string; session: string }> {
  const cart = await adminCall(api, 'POST', '/agent/carts', {
    token,
    key: null,
    body: { items: [{ id: VARIANT, quantity: 2 }] },
  });
  expect(cart.status).toBe(201);
  const checkout = await adminCall(api, 'POST', `/agent/carts/${cart.body.id}/checkout-session`, { token, key: null });
  expect(checkout.status).toBe(201);
  await payWithTestProcessor(api, cart.body.id);
  const session = await adminCall(api, 'GET', `/checkout_sessions/${cart.body.id}`);
  return { id: session.body.order.id as string, session: cart.body.id as string };
}

/** The agent's events about `orderId`, once `count` have arrived (or a minute has passed). */
async function eventsOf(receiver: WebhookReceiver, orderId: string, count: number) {
  const deadline = Date.now() + 60_000;
  const matching = () => receiver.received.filter((event) => event.body.data.order.id === orderId);
  while (matching().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return matching();
}

const stockOf = async (api: TestService, variant = VARIANT) =>
  (await api.service.deps.db('variants').where({ id: variant }).first()).inventory_quantity as number;

describe('the loop from the command line', () => {
  let api: TestService;
  let agent: { token: string; receiver: WebhookReceiver };
  let client: RegisteredClient;
  beforeAll(async () => {
    api = await startTestService();
    agent = await agentWithWebhook(api);
    client = await adminClient(api, 'admin:orders admin:catalog admin:promotions');
  });
  afterAll(async () => {
    await api?.close();
    await agent?.receiver.close();
  });

  it('runs as `npm run admin` with Node alone, as a production install pruned of dev dependencies has it', async () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    // The script's command with no node_modules/.bin on the PATH: what `npm prune --omit=dev` leaves (no tsx).
    const { stdout } = await promisify(execFile)('/bin/sh', ['-c', `${scripts.admin} orders list --json`], {
      env: {
        PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
        ADMIN_API_URL: api.url,
        ADMIN_CLIENT_ID: client.client_id,
        ADMIN_CLIENT_SECRET: client.client_secret,
      },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toEqual(expect.objectContaining({ data: expect.any(Array) }));
  });

  /** `npm run admin -- …` as a child process against the test service: its exit code and output. */
  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    const env = {
      ...process.env,
      ADMIN_API_URL: api.url,
      ADMIN_CLIENT_ID: client.client_id,
      ADMIN_CLIENT_SECRET: client.client_secret,
    };
    try {
      const { stdout, stderr } = await promisify(execFile)(
        process.execPath,
        ['--import', 'tsx', 'src/admin/cli.ts', ...argv],
        { env, timeout: 60_000 },
      );
      return { code: 0, out: stdout, err: stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, out: failed.stdout, err: failed.stderr };
    }
  }

  it(
    'ships and delivers one order, cancels another with its stock back, and the buyer sees each step',
    async () => {
      const shipped = await paidOrder(api, agent.token);
      const canceled = await paidOrder(api, agent.token);

      const listed = await cli('orders', 'list', '--status', 'paid', '--json');
      expect(listed.code, listed.err).toBe(0);
      expect(JSON.parse(listed.out).data.map((order: { id: string }) => order.id)).toEqual(
        expect.arrayContaining([shipped.id, canceled.id]),
      );
      const ship = await cli(
        'orders',
        'ship',
        shipped.id,
        '--carrier',
        'UPS',
        '--tracking-number',
        '1Z999',
        '--tracking-url',
        'https://ups.example/track/1Z999',
      );
      expect(ship.code, ship.err).toBe(0);
      expect(ship.out).toContain('shipment UPS 1Z999');

      // The buyer's side: the agent's order, the receipt page and the session's order show the shipment.
      const agentOrder = await adminCall(api, 'GET', `/agent/orders/${shipped.id}`, { token: agent.token });
      expect(agentOrder.body).toMatchObject({
        status: 'paid',
        fulfilment_status: 'shipped',
        shipments: [
          {
            carrier: 'UPS',
            tracking_number: '1Z999',
            tracking_url: 'https://ups.example/track/1Z999',
            delivered_at: null,
          },
        ],
        refunds: [],
      });
      const receipt = await api.http(new URL(agentOrder.body.permalink_url).pathname);
      const page = await receipt.text();
      expect(page).toContain('Your order has shipped.');
      expect(page).toContain('href="https://ups.example/track/1Z999"');

      const deliver = await cli('orders', 'deliver', shipped.id, '--json');
      expect(deliver.code, deliver.err).toBe(0);
      expect(JSON.parse(deliver.out).fulfilment_status).toBe('delivered');
      const session = await adminCall(api, 'GET', `/checkout_sessions/${shipped.session}`);
      expect(session.body.order).toMatchObject({ status: 'paid', fulfilment_status: 'delivered' });
      expect(await (await api.http(new URL(agentOrder.body.permalink_url).pathname)).text()).toContain(
        'Your order was delivered.',
      );

      const before = await stockOf(api);
      const cancel = await cli('orders', 'cancel', canceled.id, '--reason', 'buyer asked', '--json');
      expect(cancel.code, cancel.err).toBe(0);
      expect(JSON.parse(cancel.out)).toMatchObject({ status: 'canceled', refunds: [{ restocked: true }] });
      expect(await stockOf(api)).toBe(before + 2);
      const refundAgain = await cli('orders', 'refund', canceled.id, '--amount', '100');
      expect(refundAgain.code).toBe(1);
      expect(refundAgain.err).toContain('order_transition_refused');
      const canceledView = await adminCall(api, 'GET', `/agent/orders/${canceled.id}`, { token: agent.token });
      expect(canceledView.body).toMatchObject({ status: 'canceled', fulfilment_status: 'unfulfilled' });
      expect(canceledView.body.refunds).toMatchObject([
        { amount: canceledView.body.amount_paid, reason: 'buyer asked' },
      ]);
      expect(await (await api.http(new URL(canceledView.body.permalink_url).pathname)).text()).toContain('buyer asked');
      const canceledSession = await adminCall(api, 'GET', `/checkout_sessions/${canceled.session}`);
      expect(canceledSession.body.order.status).toBe('canceled');

      // Each change told to the agent once: created, shipped, delivered; created, cancelled.
      const shippedEvents = await eventsOf(agent.receiver, shipped.id, 3);
      expect(shippedEvents.map((event) => event.type).sort()).toEqual([
        'order.created',
        'order.updated',
        'order.updated',
      ]);
      const fulfilments = shippedEvents.map((event) => event.body.data.order.fulfilment_status).sort();
      expect(fulfilments).toEqual(['delivered', 'shipped', 'unfulfilled']);
      expect(await eventsOf(agent.receiver, canceled.id, 2)).toHaveLength(2);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'sets prices and stock, creates, lists and expires promotions, and unpublishes and publishes products',
    async () => {
      const prices = await cli('prices', 'set', VARIANT, '--price', 'reg_us:1899', '--price', 'reg_eu:1799');
      expect(prices.code, prices.err).toBe(0);
      expect(prices.out).toMatch(/reg_us {2}1899 usd/);
      expect(
        (await api.service.deps.db('variant_prices').where({ variant_id: VARIANT, region_id: 'reg_eu' }).first())
          .amount,
      ).toBe(1799);

      const set = await cli('stock', 'set', VARIANT, '--quantity', '50', '--json');
      expect(JSON.parse(set.out).inventory_quantity).toBe(50);
      const adjust = await cli('stock', 'adjust', VARIANT, '--by=-3', '--reason', 'damaged');
      expect(adjust.out).toContain('in stock 47');
      expect(await stockOf(api)).toBe(47);
      const negative = await cli('stock', 'adjust', VARIANT, '--by=-48');
      expect(negative.code).toBe(1);
      expect(negative.err).toContain('stock_would_go_negative');

      const created = await cli(
        'promotions',
        'create',
        'cli20',
        '--kind',
        'percentage',
        '--value',
        '2000',
        '--region',
        'reg_us',
        '--usage-limit',
        '10',
        '--json',
      );
      expect(created.code, created.err).toBe(0);
      expect(JSON.parse(created.out)).toMatchObject({ code: 'CLI20', value: 2000, currency: 'usd', usage_limit: 10 });
      const list = await cli('promotions', 'list');
      expect(list.out).toMatch(/CLI20 {2}20% {2}usd .*redeemed 0\/10/);
      const badValue = await cli('promotions', 'create', 'CLI21', '--kind', 'percentage', '--value', 'lots');
      expect(badValue.code).toBe(1);
      expect(badValue.err).toContain('invalid_request');
      const expired = await cli('promotions', 'expire', 'cli20', '--json');
      expect(JSON.parse(expired.out).ends_at).toEqual(expect.any(String));

      const hidden = await cli('products', 'unpublish', 'tongue-scraper-2-pack', '--reason', 'photo shoot');
      expect(hidden.code, hidden.err).toBe(0);
      expect(hidden.out).toMatch(/unpublished$/m);
      expect((await api.service.deps.db('products').where({ handle: 'tongue-scraper-2-pack' }).first()).published).toBe(
        false,
      );
      expect((await cli('products', 'publish', 'tongue-scraper-2-pack')).out).toMatch(/ published$/m);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe('a refund that arrives from Stripe', () => {
  let api: TestService;
  let stripe: FakeStripe;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ api, stripe, close } = await startStripeService());
  });
  afterAll(async () => {
    await close?.();
  });

  it('counts the money without restocking; an admin refund then refunds only the rest, never twice', async () => {
    const session = await createdSession(api, { items: [{ id: VARIANT, quantity: 2 }] });
    const checkout = await stripeCheckoutFor(api, stripe, session.id);
    const deliver = (init: RequestInit) => api.http('/webhooks/stripe', init);
    await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
    const orderId = ((await (await api.http(`/checkout_sessions/${session.id}`)).json()) as any).order.id as string;
    const stock = await stockOf(api);
    const charge = (amountRefunded: number) =>
      stripeEvent('charge.refunded', {
        id: `ch_${checkout.id}`,
        object: 'charge',
        payment_intent: `pi_${checkout.id}`,
        amount: checkout.amountTotal,
        amount_refunded: amountRefunded,
        refunded: amountRefunded === checkout.amountTotal,
      });
    expect((await deliver(signedDelivery(charge(500)))).status).toBe(200);
    const token = await adminToken(api, 'admin:orders');
    const read = await adminCall(api, 'GET', `/admin/orders/${orderId}`, { token });
    expect(read.body).toMatchObject({ status: 'partially_refunded', payments: [{ amount_refunded: 500 }] });
    // The documented choice: a refund made in Stripe's dashboard names no units, so it restocks nothing.
    expect(await stockOf(api)).toBe(stock);

    const line = read.body.line_items[0];
    const rest = await adminCall(api, 'POST', `/admin/orders/${orderId}/refunds`, {
      token,
      body: { restock: [{ line_id: line.id, quantity: 2 }] },
    });
    expect(rest.status).toBe(200);
    expect(rest.body).toMatchObject({ status: 'refunded', refunds: [{ amount: checkout.amountTotal - 500 }] });
    expect(stripe.refunds).toHaveLength(1);
    expect(await stockOf(api)).toBe(stock + 2);
    // Stripe then reports the whole charge refunded: the same money is not counted, or refunded, again.
    expect((await deliver(signedDelivery(charge(checkout.amountTotal)))).status).toBe(200);
    const after = await adminCall(api, 'GET', `/admin/orders/${orderId}`, { token });
    expect(after.body).toMatchObject({ status: 'refunded', payments: [{ amount_refunded: checkout.amountTotal }] });
    expect(stripe.refunds).toHaveLength(1);
    expect(await stockOf(api)).toBe(stock + 2);
  });
});

describe.skipIf(!serverUrl)('two instances on one database', () => {
  let database: TestDatabase;
  let one: TestService;
  let two: TestService;
  let agent: { token: string; receiver: WebhookReceiver };
  beforeAll(async () => {
    database = await createTestDatabase();
    one = await startTestService({ database });
    two = await startTestService({ database });
    agent = await agentWithWebhook(one);
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await agent?.receiver.close();
    await database?.drop();
  });

  it('deliver each admin event to the agent exactly once', async () => {
    const token = await adminToken(one, 'admin:orders');
    const orders = [await paidOrder(one, agent.token), await paidOrder(two, agent.token)];
    const [first, second] = orders.map((order) => order.id) as [string, string];
    // Changes made on either instance, some under the same key sent to both at once.
    const key = 'ship-both';
    const ship = await Promise.all(
      [one, two].map((api) =>
        adminCall(api, 'POST', `/admin/orders/${first}/shipments`, {
          token,
          key,
          body: { carrier: 'UPS', tracking_number: '1Z1' },
        }),
      ),
    );
    expect(ship.map((answer) => answer.status).sort()).toEqual(expect.arrayContaining([200]));
    expect((await adminCall(two, 'POST', `/admin/orders/${first}/deliver`, { token })).status).toBe(200);
    expect((await adminCall(one, 'POST', `/admin/orders/${second}/cancel`, { token })).status).toBe(200);

    const firstEvents = await eventsOf(agent.receiver, first, 3);
    const secondEvents = await eventsOf(agent.receiver, second, 2);
    // Both instances' outbox workers ran meanwhile; nothing more arrives.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    for (const [events, count] of [
      [firstEvents, 3],
      [secondEvents, 2],
    ] as const) {
      expect(events).toHaveLength(count);
      expect(new Set(events.map((event) => event.id)).size).toBe(count);
      expect(events.every((event) => event.signatureValid)).toBe(true);
    }
    expect(agent.receiver.received.filter((event) => event.body.data.order.id === first)).toHaveLength(3);
    expect(agent.receiver.received.filter((event) => event.body.data.order.id === second)).toHaveLength(2);
    expect(secondEvents.map((event) => event.body.data.order.status).sort()).toEqual(['canceled', 'paid']);
  });
});
