// Exactly-once across instances: two real service processes on one PostgreSQL take 20 concurrent Stripe deliveries
// (two events for one payment, each delivered ten times, split between them) and make one order, one stock decrement
// and one promotion redemption; their outboxes deliver each agent event once. PostgreSQL only (PGlite is one process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { call, json } from './support/contract.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
import { startServiceProcess, type ServiceProcess } from './support/process.js';
import { paidCheckout, signedDelivery, startFakeStripe, stripeEvent, type FakeStripe } from './support/stripe.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

describe.skipIf(!serverUrl)('payments on two instances', () => {
  let database: TestDatabase;
  let stripe: FakeStripe;
  let receiver: WebhookReceiver;
  let one: ServiceProcess;
  let two: ServiceProcess;
  let sql: pg.Client;
  const query = async (text: string, values: unknown[] = []) => (await sql.query(text, values)).rows;

  beforeAll(async () => {
    database = await createTestDatabase();
    [stripe, receiver] = await Promise.all([startFakeStripe(), startWebhookReceiver()]);
    const env = { ...(database.env as Record<string, string>), ...stripe.env, BASE_URL: 'https://store.example' };
    one = await startServiceProcess(env);
    two = await startServiceProcess(env);
    sql = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await sql.connect();
  }, 180_000);
  afterAll(async () => {
    await sql?.end();
    await Promise.all([one?.stop(), two?.stop()]);
    await Promise.all([stripe?.close(), receiver?.close()]);
    await database?.drop();
  });

  it('makes one order, one stock decrement and one redemption from 20 concurrent deliveries', async () => {
    const session = (
      await call(
        `${one.url}/checkout_sessions`,
        json({ items: [{ id: 'variant_01tongue2pack', quantity: 4 }], promo_codes: ['10OFF'] }),
      )
    ).body;
    const page = await call(`${two.url}/pay/${session.id}`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    const checkout = stripe.created.find((entry) => page.headers.get('location')!.endsWith(entry.id))!;
    const [{ inventory_quantity: stockBefore }] = await query(
      `select inventory_quantity from variants where id = 'variant_01tongue2pack'`,
    );
    const [{ times_redeemed: redeemedBefore }] = await query(
      `select times_redeemed from promotions where code = '10OFF'`,
    );

    const events = [
      stripeEvent('checkout.session.completed', paidCheckout(checkout)),
      stripeEvent('checkout.session.async_payment_succeeded', paidCheckout(checkout)),
    ];
    const deliveries = Array.from({ length: 20 }, (_, index) =>
      call(`${(index % 2 ? one : two).url}/webhooks/stripe`, signedDelivery(events[Math.floor(index / 2) % 2])),
    );
    const results = await Promise.all(deliveries);
    expect(results.map((result) => result.status)).toEqual(Array(20).fill(200));
    expect(results.filter((result) => result.body.result === 'order_created')).toHaveLength(1);

    expect(await query('select id from orders where session_id = $1', [session.id])).toHaveLength(1);
    expect(
      (await query(`select inventory_quantity from variants where id = 'variant_01tongue2pack'`))[0].inventory_quantity,
    ).toBe(stockBefore - 4);
    expect((await query(`select times_redeemed from promotions where code = '10OFF'`))[0].times_redeemed).toBe(
      redeemedBefore + 1,
    );
    expect((await query('select event_id from processor_events')).map((row) => row.event_id).sort()).toEqual(
      events.map((event) => event.id).sort(),
    );
    expect((await call(`${two.url}/checkout_sessions/${session.id}`)).body.status).toBe('completed');
  }, 120_000);

  it('takes a payment while a create is storing lines of the same variant (no deadlock with creates)', async () => {
    const session = (
      await call(`${one.url}/checkout_sessions`, json({ items: [{ id: 'variant_01tonguetravel', quantity: 1 }] }))
    ).body;
    const page = await call(`${one.url}/pay/${session.id}`, { redirect: 'manual' });
    const checkout = stripe.created.find((entry) => page.headers.get('location')!.endsWith(entry.id))!;
    // The lock a create's line insert takes on its variant through the foreign key, held as a create in flight holds
    // it. A payment locking that variant FOR UPDATE would wait for it (and, with a create holding another variant of
    // the order the other way round, deadlock); FOR NO KEY UPDATE, all a stock decrement needs, does not conflict.
    const create = new pg.Client({ connectionString: database.env.DATABASE_URL });
    await create.connect();
    await create.query('begin');
    await create.query(`select from variants where id = 'variant_01tonguetravel' for key share`);
    const delivery = call(
      `${two.url}/webhooks/stripe`,
      signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))),
    );
    try {
      const waited = new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5_000));
      const answer = await Promise.race([delivery, waited]);
      expect(answer === 'waited' ? answer : answer.body.result).toBe('order_created');
    } finally {
      await create.query('rollback');
      await create.end();
      await delivery;
    }
  }, 60_000);

  it("delivers each agent order event once, whichever instance's outbox claims it", async () => {
    const client = (
      await call(`${one.url}/oauth/register`, json({ scope: 'cart:write orders:read', webhook_url: receiver.url }))
    ).body;
    receiver.secret = client.webhook_secret;
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const token = (
      await call(`${one.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic },
        body: 'grant_type=client_credentials',
      })
    ).body.access_token;
    const auth = { Authorization: `Bearer ${token}` };
    const orders = 6;
    for (let index = 0; index < orders; index += 1) {
      const instance = index % 2 ? one : two;
      const cart = (
        await call(`${instance.url}/agent/carts`, json({ items: [{ id: 'variant_01tonguetravel' }] }, auth))
      ).body;
      await call(`${instance.url}/agent/carts/${cart.id}/checkout-session`, { method: 'POST', headers: auth });
      const page = await call(`${instance.url}/pay/${cart.id}`, { redirect: 'manual' });
      const checkout = stripe.created.find((entry) => page.headers.get('location')!.endsWith(entry.id))!;
      expect(
        (
          await call(
            `${instance.url}/webhooks/stripe`,
            signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))),
          )
        ).body.result,
      ).toBe('order_created');
    }
    const received = await receiver.waitFor(orders, 90_000);
    // Both instances poll every second; give a double delivery time to show before counting.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(received).toHaveLength(orders);
    expect(new Set(received.map((event) => event.id)).size).toBe(orders);
    expect(received.every((event) => event.type === 'order.created' && event.signatureValid)).toBe(true);
    expect(await query('select id from webhook_deliveries where delivered_at is null')).toHaveLength(0);
  }, 180_000);
});
