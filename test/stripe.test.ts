// The Stripe adapter against a local fake of Stripe's API: the pay page sends the buyer to a Checkout Session of
// exactly the quoted amounts (reused while the quote holds), and signed webhooks turn the session into an order
// exactly once; bad deliveries change nothing.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { sweepRetention } from '../src/services/retention.js';
import { statementsDuring } from './support/database.js';
import {
  PROTOCOL_ENV,
  protocolFetch,
  startProfileServer,
  ucpHeaders,
  type ProfileServer,
} from './support/protocols.js';
import { createdSession } from './support/checkout.js';
import { startTestService, type TestService } from './support/service.js';
import {
  paidCheckout,
  signedDelivery,
  startStripeService,
  stripeCheckoutFor,
  stripeEvent,
  type FakeStripe,
} from './support/stripe.js';

let api: TestService;
let stripe: FakeStripe;
let close: (() => Promise<void>) | undefined;
beforeAll(async () => {
  ({ api, stripe, close } = await startStripeService());
});
afterAll(async () => {
  await close?.();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const db = () => api.service.deps.db;
const count = async (table: string) => Number((await db()(table).count({ n: '*' }))[0]!.n);

const createSession = (body: unknown) => createdSession(api, body);
const getSession = async (id: string) => (await (await api.http(`/checkout_sessions/${id}`)).json()) as any;
const minor = (amount: number) => Math.round(amount * 100);

const checkoutFor = (sessionId: string) => stripeCheckoutFor(api, stripe, sessionId);

const deliver = async (init: RequestInit) => {
  const response = await api.http('/webhooks/stripe', init);
  return { status: response.status, body: (await response.json()) as any };
};

describe('the pay page with Stripe', () => {
  it('sends the buyer to a Checkout Session charging exactly the quote, in minor units, with an idempotency key', async () => {
    const session = await createSession({
      items: [
        { id: TWO_PACK, quantity: 3 },
        { id: TRAVEL, quantity: 1 },
      ],
      promo_codes: ['10OFF'],
      buyer: { email: 'ada@example.com' },
    });
    const checkout = await checkoutFor(session.id);
    expect(checkout.amountTotal).toBe(minor(session.totals.total.amount));
    expect(checkout.currency).toBe('usd');
    expect(checkout.params.get('client_reference_id')).toBe(session.id);
    expect(checkout.params.get('customer_email')).toBe('ada@example.com');
    expect(checkout.params.get('mode')).toBe('payment');
    expect(checkout.idempotencyKey).toMatch(new RegExp(`^checkout:${session.id}:`));
  });

  it('adds shipping as Stripe shipping so the charge still equals the total (JPY, no minor unit)', async () => {
    const session = await createSession({ items: [{ id: TRAVEL, quantity: 1 }], region_id: 'reg_jp' });
    expect(session.totals.shipping.amount).toBeGreaterThan(0);
    const checkout = await checkoutFor(session.id);
    expect(checkout.currency).toBe('jpy');
    expect(checkout.amountTotal).toBe(session.totals.total.amount);
  });

  it('charges a quote for a destination exactly: taxed shipping in the shipping rate, no Stripe tax, the address sent', async () => {
    // New York taxes shipping and adds tax on top: 12.99 + 4.95 + 4 % of each (0.52 + 0.20) = 18.66.
    const newYork = await createSession({
      items: [{ id: TWO_PACK }],
      shipping_address: {
        recipient_name: 'Ada',
        line1: '1 Main St',
        city: 'New York',
        region: 'NY',
        postal_code: '10001',
        country: 'US',
      },
    });
    expect(newYork.totals.total.amount).toBe(18.66);
    const taxedShipping = await checkoutFor(newYork.id);
    expect(taxedShipping.amountTotal).toBe(1866);
    expect(taxedShipping.params.get('shipping_options[0][shipping_rate_data][fixed_amount][amount]')).toBe('515');
    expect(taxedShipping.params.get('payment_intent_data[shipping][address][state]')).toBe('NY');
    expect([...taxedShipping.params.keys()].some((key) => key.startsWith('automatic_tax'))).toBe(false);

    // Germany with Express: 19 % VAT inside the amounts, the Express price.
    const berlin = await createSession({
      items: [{ id: TWO_PACK }],
      region_id: 'reg_eu',
      shipping_option: 'express',
      shipping_address: {
        recipient_name: 'Erika',
        line1: 'Friedrichstraße 43',
        city: 'Berlin',
        postal_code: '10117',
        country: 'DE',
      },
    });
    const checkout = await checkoutFor(berlin.id);
    expect(checkout.amountTotal).toBe(2946);
    expect(checkout.params.get('shipping_options[0][shipping_rate_data][fixed_amount][amount]')).toBe('1495');
    expect(checkout.params.get('shipping_options[0][shipping_rate_data][display_name]')).toBe(
      'Shipping: Express shipping',
    );
    expect(checkout.params.get('payment_intent_data[shipping][address][country]')).toBe('DE');
    const delivered = await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
    expect(delivered.body.result).toBe('order_created');
    const order = await db()('orders').where({ session_id: berlin.id }).first();
    expect(order).toMatchObject({ status: 'paid', total: 2946, shipping: 1495, tax: 471, amount_paid: 2946 });
    expect(order.fulfilment).toMatchObject({
      shippingOption: { code: 'express' },
      taxes: [{ jurisdiction: 'DE', rate: 19000, amount: 471 }],
    });
  });

  it('reuses the Checkout Session while the quote is unchanged, and replaces (and expires) it when it changes', async () => {
    const session = await createSession({ items: [{ id: TRAVEL, quantity: 2 }] });
    const first = await checkoutFor(session.id);
    const creates = stripe.created.length;
    expect((await checkoutFor(session.id)).id).toBe(first.id);
    expect(stripe.created.length).toBe(creates);

    await db()('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_us' }).update({ amount: 2099 });
    try {
      const second = await checkoutFor(session.id);
      expect(second.id).not.toBe(first.id);
      expect(second.amountTotal).toBe(minor((await getSession(session.id)).totals.total.amount));
      expect(first.expired).toBe(true);
    } finally {
      await db()('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_us' }).update({ amount: 1999 });
    }
  });

  it('renews a Checkout Session about to expire with a new one, not an idempotent replay of the old', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const first = await checkoutFor(session.id);
    await db()('processor_checkouts')
      .where({ reference: first.id })
      .update({ expires_at: new Date(Date.now() + 5 * 60_000) });
    const renewed = await checkoutFor(session.id);
    expect(renewed.id).not.toBe(first.id);
    expect(renewed.idempotencyKey).not.toBe(first.idempotencyKey);
  });

  it('answers 502 when Stripe cannot be reached, and nothing is stored', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    stripe.failWith = 500;
    try {
      const page = await api.http(`/pay/${session.id}`, { redirect: 'manual' });
      expect(page.status).toBe(502);
      expect(((await page.json()) as any).error.code).toBe('payment_processor_unavailable');
    } finally {
      stripe.failWith = undefined;
    }
    expect(await db()('processor_checkouts').where({ session_id: session.id })).toHaveLength(0);
  });

  it('turns the test button off', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const response = await api.http(`/pay/${session.id}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'csrf_token=x&quote=y',
    });
    expect(response.status).toBe(403);
  });
});

describe('Stripe webhooks', () => {
  it('turns a paid checkout into one order, however often and however the payment is reported', async () => {
    const session = await createSession({ items: [{ id: TWO_PACK, quantity: 2 }], promo_codes: ['10OFF'] });
    const checkout = await checkoutFor(session.id);
    const completed = stripeEvent('checkout.session.completed', paidCheckout(checkout));
    expect(await deliver(signedDelivery(completed))).toEqual({
      status: 200,
      body: { received: true, event: completed.id, result: 'order_created' },
    });
    expect((await deliver(signedDelivery(completed))).body.result).toBe('duplicate');
    const asyncSucceeded = stripeEvent('checkout.session.async_payment_succeeded', paidCheckout(checkout));
    expect((await deliver(signedDelivery(asyncSucceeded))).body.result).toBe('order_exists');

    const paid = await getSession(session.id);
    expect(paid.status).toBe('completed');
    expect(paid.totals).toEqual(session.totals);
    const [order] = await db()('orders').where({ session_id: session.id });
    expect(order).toMatchObject({
      status: 'paid',
      processor: 'stripe',
      payment_reference: `pi_${checkout.id}`,
      amount_paid: minor(session.totals.total.amount),
      buyer_email: 'buyer@example.com',
    });
  });

  it('makes the order in 1 statement: the session locked, the event recorded, the quote sent read, the stock locked and every write', async () => {
    const session = await createSession({
      items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }],
      promo_codes: ['10OFF'],
    });
    const checkout = await checkoutFor(session.id);
    const stockOf = async () =>
      Object.fromEntries(
        (await db()('variants').whereIn('id', [TWO_PACK, TRAVEL]).select('id', 'inventory_quantity')).map(
          (row: { id: string; inventory_quantity: number }) => [row.id, row.inventory_quantity],
        ),
      );
    const redeemed = async () => (await db()('promotions').where({ code: '10OFF' }).first()).times_redeemed as number;
    const [stockBefore, redeemedBefore] = [await stockOf(), await redeemed()];
    const tables = [
      'processor_checkouts',
      'processor_events',
      'carts',
      'variants',
      'promotions',
      'orders',
      'order_line_items',
      'order_numbers',
    ];
    const statements = await statementsDuring(db(), tables, async () => {
      const delivered = await deliver(
        signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))),
      );
      expect(delivered.body.result).toBe('order_created');
    });
    expect(statements).toBe(1);

    // Everything the one statement writes.
    expect(await stockOf()).toEqual({ [TWO_PACK]: stockBefore[TWO_PACK]! - 2, [TRAVEL]: stockBefore[TRAVEL]! - 1 });
    expect(await redeemed()).toBe(redeemedBefore + 1);
    const order = await db()('orders').where({ session_id: session.id }).first();
    expect(order.order_number).toMatch(/^SF-\d+$/);
    expect(await db()('order_line_items').where({ order_id: order.id }).orderBy('position')).toEqual([
      expect.objectContaining({ id: session.line_items[0].id, position: 0, variant_id: TWO_PACK, quantity: 2 }),
      expect.objectContaining({ id: session.line_items[1].id, position: 1, variant_id: TRAVEL, quantity: 1 }),
    ]);
    const paid = await getSession(session.id);
    expect(paid.status).toBe('completed');
    expect(paid.totals).toEqual(session.totals);
    expect((await db()('carts').where({ id: session.id }).first()).completed_at).toEqual(order.created_at);
  });

  it('waits for async_payment_succeeded when the checkout completed unpaid', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    expect(
      (
        await deliver(
          signedDelivery(
            stripeEvent('checkout.session.completed', paidCheckout(checkout, { payment_status: 'unpaid' })),
          ),
        )
      ).body.result,
    ).toBe('ignored');
    expect((await getSession(session.id)).status).toBe('ready_for_payment');
    expect(
      (await deliver(signedDelivery(stripeEvent('checkout.session.async_payment_succeeded', paidCheckout(checkout)))))
        .body.result,
    ).toBe('order_created');
  });

  it('records the quote Stripe was asked to charge, and flags a different amount for review', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    await deliver(
      signedDelivery(
        stripeEvent('checkout.session.completed', paidCheckout(checkout, { amount_total: checkout.amountTotal - 100 })),
      ),
    );
    expect((await getSession(session.id)).order.status).toBe('needs_review');
    expect((await db()('orders').where({ session_id: session.id }))[0]).toMatchObject({
      review_reasons: ['amount_mismatch'],
      total: checkout.amountTotal,
    });
  });

  it('charges the quote Stripe was sent, not the session as priced now', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    const prices = () => db()('variant_prices').where({ variant_id: TRAVEL });
    const before = (await prices().select('region_id', 'amount')) as Array<{ region_id: string; amount: number }>;
    await prices().increment('amount', 500);
    try {
      const delivered = await deliver(
        signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))),
      );
      expect(delivered.body.result).toBe('order_created');
    } finally {
      for (const { region_id, amount } of before)
        await db()('variant_prices').where({ variant_id: TRAVEL, region_id }).update({ amount });
    }
    expect((await db()('orders').where({ session_id: session.id }))[0]).toMatchObject({
      status: 'paid',
      review_reasons: [],
      total: checkout.amountTotal,
    });
  });

  it('prices the session now when the checkout paid is not one this store recorded, and takes its stock', async () => {
    const session = await createSession({ items: [{ id: TWO_PACK, quantity: 3 }] });
    const checkout = await checkoutFor(session.id);
    await db()('processor_checkouts').where({ session_id: session.id }).delete();
    const stock = async () => (await db()('variants').where({ id: TWO_PACK }).first()).inventory_quantity as number;
    const stockBefore = await stock();
    const delivered = await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
    expect(delivered.body.result).toBe('order_created');
    expect(await stock()).toBe(stockBefore - 3);
    expect((await db()('orders').where({ session_id: session.id }))[0]).toMatchObject({
      status: 'paid',
      total: minor(session.totals.total.amount),
    });
  });

  it('applies refunds: partial, then full, each event once', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
    const charge = (amountRefunded: number) =>
      stripeEvent('charge.refunded', {
        id: `ch_${checkout.id}`,
        object: 'charge',
        payment_intent: `pi_${checkout.id}`,
        amount: checkout.amountTotal,
        amount_refunded: amountRefunded,
        refunded: amountRefunded === checkout.amountTotal,
      });
    expect((await deliver(signedDelivery(charge(500)))).body.result).toBe('order_updated');
    expect((await getSession(session.id)).order.status).toBe('partially_refunded');
    expect((await deliver(signedDelivery(charge(checkout.amountTotal)))).body.result).toBe('order_updated');
    expect((await getSession(session.id)).order.status).toBe('refunded');
  });

  it('acknowledges and ignores event types it does not act on', async () => {
    const before = await count('processor_events');
    expect(
      await deliver(signedDelivery(stripeEvent('customer.created', { id: 'cus_1', object: 'customer' }))),
    ).toMatchObject({ status: 200, body: { result: 'ignored' } });
    expect(await count('processor_events')).toBe(before);
  });

  it('refuses bad deliveries with a clear JSON error and changes nothing', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    const event = stripeEvent('checkout.session.completed', paidCheckout(checkout));
    const before = { events: await count('processor_events'), orders: await count('orders') };
    const good = signedDelivery(event);
    const cases: Array<[string, RequestInit, number, string]> = [
      ['missing signature', { ...good, headers: { 'Content-Type': 'application/json' } }, 400, 'invalid_signature'],
      ['wrong secret', signedDelivery(event, { secret: 'whsec_someone_else' }), 400, 'invalid_signature'],
      [
        'stale timestamp',
        signedDelivery(event, { timestamp: Math.floor(Date.now() / 1000) - 3600 }),
        400,
        'invalid_signature',
      ],
      [
        'tampered body',
        { ...good, body: String(good.body).replace(String(checkout.amountTotal), '1') },
        400,
        'invalid_signature',
      ],
      ['malformed JSON', { ...signedDelivery(event), body: '{"id": "evt_broken",' }, 400, 'invalid_parameter'],
      [
        'unknown session',
        signedDelivery(
          stripeEvent('checkout.session.completed', paidCheckout(checkout, { client_reference_id: 'cart_unknown' })),
        ),
        404,
        'not_found',
      ],
      [
        'unknown payment refunded',
        signedDelivery(
          stripeEvent('charge.refunded', {
            id: 'ch_x',
            object: 'charge',
            payment_intent: 'pi_unknown',
            amount_refunded: 100,
          }),
        ),
        404,
        'not_found',
      ],
    ];
    for (const [name, init, status, code] of cases) {
      const { status: got, body } = await deliver(init);
      expect(got, name).toBe(status);
      expect(body.error.code, name).toBe(code);
    }
    expect({ events: await count('processor_events'), orders: await count('orders') }).toEqual(before);
    expect((await getSession(session.id)).status).toBe('ready_for_payment');
  });
});

describe('choosing the processor', () => {
  it('refuses to start in production without a processor unless test payments are asked for', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/PAYMENTS_MODE=test/);
    expect(loadConfig({ NODE_ENV: 'production', PAYMENTS_MODE: 'test' }).payments).toEqual({ mode: 'test' });
    expect(loadConfig({}).payments).toEqual({ mode: 'test' });
    expect(
      loadConfig({ NODE_ENV: 'production', STRIPE_SECRET_KEY: 'sk', STRIPE_WEBHOOK_SECRET: 'whsec' }).payments.mode,
    ).toBe('stripe');
    expect(() => loadConfig({ STRIPE_SECRET_KEY: 'sk' })).toThrow(/set together/);
    expect(() => loadConfig({ PAYMENTS_MODE: 'stripe' })).toThrow(/needs STRIPE_SECRET_KEY/);
  });
});

// Issue 29, findings 5 to 9: no Stripe payment the store cannot honour, and a pay page that costs Stripe one call per
// quote whatever the visitors do.
describe('Stripe checkouts the store can honour', () => {
  const holdsOf = (sessionId: string) => db()('payment_holds').where({ session_id: sessionId }).orderBy('kind');
  const refusalOf = async (sessionId: string) => db()('refused_payments').where({ session_id: sessionId }).first();
  const payPage = (sessionId: string) => api.http(`/pay/${sessionId}`, { redirect: 'manual' });

  it("makes a checkout for a promotion's last use for one of 5 buyers: the others get no checkout and are told why", async () => {
    const sessions = [];
    for (let index = 0; index < 5; index++)
      sessions.push(await createSession({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] }));
    const redeemed = (await db()('promotions').where({ code: '10OFF' }).first()).times_redeemed as number;
    await db()('promotions')
      .where({ code: '10OFF' })
      .update({ usage_limit: redeemed + 1 });
    try {
      const creates = stripe.created.length;
      const pages = await Promise.all(sessions.map((session) => payPage(session.id)));
      expect(pages.map((page) => page.status).sort()).toEqual([303, 409, 409, 409, 409]);
      expect(stripe.created.length).toBe(creates + 1);
      for (const page of pages.filter((answer) => answer.status === 409)) {
        const html = await page.text();
        expect(html).toContain('usage limit');
        expect(html).not.toContain('<form');
      }
      const holder = sessions[pages.findIndex((page) => page.status === 303)];
      expect((await holdsOf(holder.id)).map(({ kind, name, quantity }) => ({ kind, name, quantity }))).toEqual([
        { kind: 'promotion', name: '10OFF', quantity: 1 },
        { kind: 'variant', name: TRAVEL, quantity: 1 },
      ]);
    } finally {
      await db()('promotions').where({ code: '10OFF' }).update({ usage_limit: null });
    }
  });

  it('makes checkouts for the stock there is, and refunds through Stripe a payment that arrives for stock taken meanwhile', async () => {
    const sessions = [];
    for (let index = 0; index < 3; index++) sessions.push(await createSession({ items: [{ id: TWO_PACK }] }));
    // Only these sessions' checkouts hold this stock (not those of earlier tests).
    await db()('payment_holds').where({ kind: 'variant', name: TWO_PACK }).delete();
    const stockBefore = (await db()('variants').where({ id: TWO_PACK }).first()).inventory_quantity as number;
    await db()('variants').where({ id: TWO_PACK }).update({ inventory_quantity: 2 });
    try {
      const pages: Response[] = [];
      for (const session of sessions) pages.push(await payPage(session.id));
      expect(pages.map((page) => page.status)).toEqual([303, 303, 409]);
      expect(await pages[2]!.text()).toContain('sold out');

      // The first buyer's hold lapses and the stock goes elsewhere; the buyer had paid just before.
      const checkout = stripe.created.find((entry) => pages[0]!.headers.get('location')!.endsWith(entry.id))!;
      await db()('payment_holds').where({ session_id: sessions[0].id }).delete();
      await db()('variants').where({ id: TWO_PACK }).update({ inventory_quantity: 1 });
      const paid = await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
      expect(paid).toMatchObject({ status: 200, body: { result: 'payment_refunded' } });
      expect(stripe.refunds.filter((refund) => refund.paymentIntent === `pi_${checkout.id}`)).toHaveLength(1);
      expect(await refusalOf(sessions[0].id)).toMatchObject({
        reasons: ['insufficient_stock'],
        amount: checkout.amountTotal,
        refund_state: 'refunded',
        refund_reference: stripe.refunds.at(-1)!.id,
      });
      expect(await db()('orders').where({ session_id: sessions[0].id })).toHaveLength(0);
      expect((await db()('variants').where({ id: TWO_PACK }).first()).inventory_quantity).toBe(1);
      // The buyer coming back from Stripe is told.
      const back = await payPage(sessions[0].id);
      expect(back.status).toBe(409);
      expect(await back.text()).toContain('refunded to you in full');
      // Stripe's report of that refund is acknowledged.
      const refunded = await deliver(
        signedDelivery(
          stripeEvent('charge.refunded', {
            id: `ch_${checkout.id}`,
            object: 'charge',
            payment_intent: `pi_${checkout.id}`,
            amount: checkout.amountTotal,
            amount_refunded: checkout.amountTotal,
            refunded: true,
          }),
        ),
      );
      expect(refunded).toMatchObject({ status: 200, body: { result: 'payment_refunded' } });
    } finally {
      await db()('variants').where({ id: TWO_PACK }).update({ inventory_quantity: stockBefore });
    }
  });

  it("does not count a session's own hold against it when its quote changes", async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const stockBefore = (await db()('variants').where({ id: TRAVEL }).first()).inventory_quantity as number;
    // Only this session holds the stock's last unit.
    await db()('payment_holds').where({ kind: 'variant', name: TRAVEL }).delete();
    await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 1 });
    try {
      const first = await checkoutFor(session.id);
      expect(await holdsOf(session.id)).toMatchObject([{ kind: 'variant', name: TRAVEL, quantity: 1 }]);
      await db()('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_us' }).update({ amount: 2099 });
      const second = await checkoutFor(session.id);
      expect(second.id).not.toBe(first.id);
    } finally {
      await db()('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_us' }).update({ amount: 1999 });
      await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: stockBefore });
    }
  });

  it('never offers again the Checkout a refused payment was made through', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    // The buyer's hold lapsed and the stock went elsewhere before the payment arrived.
    await db()('payment_holds').where({ session_id: session.id }).delete();
    const stockBefore = (await db()('variants').where({ id: TRAVEL }).first()).inventory_quantity as number;
    await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 0 });
    try {
      const paid = await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
      expect(paid).toMatchObject({ status: 200, body: { result: 'payment_refunded' } });
    } finally {
      await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: stockBefore });
    }
    // Restocked, the session can be paid again, through a new Checkout: the paid one would be charged twice.
    const again = await checkoutFor(session.id);
    expect(again.id).not.toBe(checkout.id);
  });

  it('asks Stripe again for a refund it could not make, when the event is delivered again', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const checkout = await checkoutFor(session.id);
    expect((await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' })).status).toBe(200);
    const event = stripeEvent('checkout.session.completed', paidCheckout(checkout));
    stripe.failWith = 500;
    try {
      expect((await deliver(signedDelivery(event))).status).toBe(502);
    } finally {
      stripe.failWith = undefined;
    }
    expect(await refusalOf(session.id)).toMatchObject({ refund_state: 'pending' });
    expect(await deliver(signedDelivery(event))).toMatchObject({ status: 200, body: { result: 'duplicate' } });
    expect(await refusalOf(session.id)).toMatchObject({ refund_state: 'refunded' });
    expect(stripe.refunds.filter((refund) => refund.paymentIntent === `pi_${checkout.id}`)).toHaveLength(1);
  });

  it('expires the open Checkout when the session is cancelled, and refunds a payment that arrives even so', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] });
    const checkout = await checkoutFor(session.id);
    expect(await holdsOf(session.id)).toHaveLength(1);
    const cancel = await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(200);
    expect(checkout.expired).toBe(true);
    expect(stripe.calls).toContainEqual({ method: 'POST', path: `/v1/checkout/sessions/${checkout.id}/expire` });

    const [stock, redeemed] = [
      (await db()('variants').where({ id: TRAVEL }).first()).inventory_quantity,
      (await db()('promotions').where({ code: '10OFF' }).first()).times_redeemed,
    ];
    const paid = await deliver(signedDelivery(stripeEvent('checkout.session.completed', paidCheckout(checkout))));
    expect(paid).toMatchObject({ status: 200, body: { result: 'payment_refunded' } });
    expect(stripe.refunds.filter((refund) => refund.paymentIntent === `pi_${checkout.id}`)).toHaveLength(1);
    expect(await refusalOf(session.id)).toMatchObject({ reasons: ['session_canceled'], refund_state: 'refunded' });
    expect((await getSession(session.id)).status).toBe('canceled');
    expect(await db()('orders').where({ session_id: session.id })).toHaveLength(0);
    expect((await db()('variants').where({ id: TRAVEL }).first()).inventory_quantity).toBe(stock);
    expect((await db()('promotions').where({ code: '10OFF' }).first()).times_redeemed).toBe(redeemed);
  });

  it('answers 20 double-clicked first visits with the same Checkout, made once each', async () => {
    const sessions = [];
    for (let index = 0; index < 20; index++) sessions.push(await createSession({ items: [{ id: TRAVEL }] }));
    const creates = stripe.calls.filter((call) => call.path === '/v1/checkout/sessions').length;
    const pairs = await Promise.all(sessions.map((session) => Promise.all([payPage(session.id), payPage(session.id)])));
    for (const [first, second] of pairs) {
      expect([first.status, second.status]).toEqual([303, 303]);
      expect(second.headers.get('location')).toBe(first.headers.get('location'));
    }
    expect(stripe.calls.filter((call) => call.path === '/v1/checkout/sessions').length - creates).toBe(20);
    for (const session of sessions)
      expect(await db()('processor_checkouts').where({ session_id: session.id })).toHaveLength(1);
  });

  it('makes at most 10 Checkouts for one session whose quote keeps changing, then asks for a new session', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const price = () => db()('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_us' });
    const before = (await price().first()).amount as number;
    const creates = stripe.created.length;
    const statuses = [];
    let refusal = '';
    try {
      for (let change = 0; change < 12; change++) {
        await price().update({ amount: before + (change % 3) });
        const page = await payPage(session.id);
        statuses.push(page.status);
        refusal = await page.text();
      }
    } finally {
      await price().update({ amount: before });
    }
    expect(statuses.join(' ')).toBe([...Array(10).fill(303), 409, 409].join(' '));
    expect(stripe.created.length - creates).toBe(10);
    expect(await db()('processor_checkouts').where({ session_id: session.id })).toHaveLength(10);
    expect(refusal).toContain('changed too many times');
  });

  it('purges a session whose pay page was opened once its Checkout has expired, with its checkouts and holds', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    await checkoutFor(session.id);
    const monthAgo = new Date(Date.now() - 31 * 24 * 3600_000);
    await db()('carts').where({ id: session.id }).update({ updated_at: monthAgo });
    // Its Checkout could still be paid: kept.
    await sweepRetention(api.service.deps);
    expect((await api.http(`/checkout_sessions/${session.id}`)).status).toBe(200);
    await db()('processor_checkouts').where({ session_id: session.id }).update({ expires_at: monthAgo });
    await sweepRetention(api.service.deps);
    expect((await api.http(`/checkout_sessions/${session.id}`)).status).toBe(404);
    expect(await db()('processor_checkouts').where({ session_id: session.id })).toHaveLength(0);
    expect(await db()('payment_holds').where({ session_id: session.id })).toHaveLength(0);
  });
});

describe('a UCP cancel', () => {
  let ucp: TestService;
  let profiles: ProfileServer;
  beforeAll(async () => {
    profiles = await startProfileServer();
    ucp = await startTestService({ env: { ...PROTOCOL_ENV, ...stripe.env } });
  });
  afterAll(async () => {
    await ucp?.close();
    await profiles?.close();
  });

  it("expires the session's open Stripe Checkout once the cancel has committed", async () => {
    const headers = () => ucpHeaders(profiles.url('/full.json'));
    const created = await protocolFetch(ucp, '/ucp/checkout-sessions', {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ line_items: [{ item: { id: TRAVEL }, quantity: 1 }] }),
    });
    expect(created.response.status).toBe(201);
    const page = await ucp.http(`/pay/${created.body.id}`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    const checkout = stripe.created.find((entry) => page.headers.get('location')!.endsWith(entry.id))!;
    const canceled = await protocolFetch(ucp, `/ucp/checkout-sessions/${created.body.id}/cancel`, {
      method: 'POST',
      headers: headers(),
    });
    expect(canceled.response.status).toBe(200);
    // Expired after the cancel's transaction commits, without holding up its answer.
    await vi.waitFor(() => expect(checkout.expired).toBe(true), { timeout: 20_000, interval: 50 });
  });
});
