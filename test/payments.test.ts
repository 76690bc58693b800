// Payments with the built-in test processor and the order path every processor shares: the buyer pays on the pay
// page, the session becomes an order exactly once (stock, promotion redemptions), money problems are flagged, refunds
// move the order's status, and every surface shows the result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCartWithLines } from '../src/db/repositories/carts.js';
import { findRegion } from '../src/db/repositories/catalog.js';
import { findOrderBySession } from '../src/db/repositories/orders.js';
import { PAID_ORDERS, PAYMENT_LOCKS } from '../src/db/repositories/paid-orders.js';
import { findPromotions } from '../src/db/repositories/promotions.js';
import { NotFound } from '../src/domain/errors.js';
import { quoteCart } from '../src/services/checkout.js';
import { recordPayment, recordRefund, type PaymentReport } from '../src/services/orders.js';
import { serverUrl, SESSION_READ_TABLES, statementsDuring } from './support/database.js';
import { openPayForm, payWithTestProcessor, submitPayForm } from './support/payments.js';
import { createdSession } from './support/checkout.js';
import { startTestService, type TestService } from './support/service.js';
import { lockWaiters } from './support/statements.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService({ env: { BASE_URL: 'https://store.example' } });
});
afterAll(async () => {
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

const createSession = (
  body: unknown = {
    items: [
      { id: TWO_PACK, quantity: 2 },
      { id: TRAVEL, quantity: 1 },
    ],
    promo_codes: ['10OFF'],
    buyer: { email: 'ada@example.com' },
  },
) => createdSession(api, body);
const getSession = async (id: string) => (await (await api.http(`/checkout_sessions/${id}`)).json()) as any;
const db = () => api.service.deps.db;
const stockOf = async (id: string) =>
  Number((await db()('variants').where({ id }).first('inventory_quantity')).inventory_quantity);
const redemptions = async (code: string) =>
  Number((await db()('promotions').where({ code }).first('times_redeemed')).times_redeemed);
const ordersOf = (sessionId: string) => db()('orders').where({ session_id: sessionId });
const refusalsOf = (sessionId: string) => db()('refused_payments').where({ session_id: sessionId });

describe('paying with the test processor', () => {
  it('shows the cart and a clearly labelled test button', async () => {
    const session = await createSession();
    const form = await openPayForm(api, session.id);
    expect(form.html).toContain('(test mode, no money moves)');
    expect(form.html).toContain(`$${session.totals.total.amount.toFixed(2)}`);
    expect(form.html).toContain('10OFF');
    expect(form.csrfToken).toMatch(/^[\w-]{32}$/);
  });

  it('turns the session into an order once: completed, order totals, stock taken, promotion counted', async () => {
    const session = await createSession();
    const [twoPackBefore, travelBefore, redeemedBefore] = [
      await stockOf(TWO_PACK),
      await stockOf(TRAVEL),
      await redemptions('10OFF'),
    ];
    const form = await openPayForm(api, session.id);
    const paid = await submitPayForm(api, session.id, form);
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`/pay/${session.id}`);

    const completed = await getSession(session.id);
    expect(completed.status).toBe('completed');
    expect(completed.totals).toEqual(session.totals);
    expect(completed.line_items).toEqual(session.line_items);
    expect(completed.order).toEqual({
      id: expect.stringMatching(/^order_/),
      order_number: expect.stringMatching(/^SF-\d+$/),
      status: 'paid',
      fulfilment_status: 'unfulfilled',
      permalink_url: expect.stringMatching(/^https:\/\/store\.example\/orders\/rcpt_/),
    });

    const [order] = await ordersOf(session.id);
    expect(order).toMatchObject({
      status: 'paid',
      processor: 'test',
      currency: 'usd',
      total: Math.round(session.totals.total.amount * 100),
      amount_paid: Math.round(session.totals.total.amount * 100),
      buyer_email: 'ada@example.com',
      promo_codes: ['10OFF'],
    });
    expect(await stockOf(TWO_PACK)).toBe(twoPackBefore - 2);
    expect(await stockOf(TRAVEL)).toBe(travelBefore - 1);
    expect(await redemptions('10OFF')).toBe(redeemedBefore + 1);

    // A second press (or a reload of the form) pays nothing more.
    expect((await submitPayForm(api, session.id, form)).status).toBe(303);
    expect(await ordersOf(session.id)).toHaveLength(1);
    expect(await stockOf(TWO_PACK)).toBe(twoPackBefore - 2);
    expect(await redemptions('10OFF')).toBe(redeemedBefore + 1);
  });

  it('reads a paid session in 1 statement: the order and its lines come with the cart', async () => {
    const session = await createSession();
    await payWithTestProcessor(api, session.id);
    const statements = await statementsDuring(db(), SESSION_READ_TABLES, async () => {
      const completed = await getSession(session.id);
      expect(completed.status).toBe('completed');
      expect(completed.order.order_number).toMatch(/^SF-\d+$/);
    });
    expect(statements).toBe(1);
  });

  it("reads a session's region, promotions and order in exactly the shapes of their own look-ups", async () => {
    const session = await createSession({ items: [{ id: TWO_PACK }], promo_codes: ['10off', 'NOPE', '10OFF'] });
    await payWithTestProcessor(api, session.id);
    const found = (await findCartWithLines(db(), session.id))!;
    expect(found.region).toStrictEqual(await findRegion(db(), found.cart.region_id));
    expect(found.promotions).toStrictEqual(await findPromotions(db(), ['10OFF', 'NOPE']));
    expect(found.promotions.size).toBe(1);
    expect(found.order).toStrictEqual(await findOrderBySession(db(), session.id));
  });

  it('shows the receipt on the pay page and at the order permalink', async () => {
    const session = await createSession();
    await payWithTestProcessor(api, session.id);
    const { order } = await getSession(session.id);
    const page = await api.http(`/pay/${session.id}`);
    const html = await page.text();
    expect(html).toContain(order.order_number);
    expect(html).toContain('payment was received');
    expect(html).not.toContain('<form');

    const receipt = await api.http(new URL(order.permalink_url).pathname);
    expect(receipt.status).toBe(200);
    expect(receipt.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await receipt.text()).toContain(order.order_number);
    const unknown = await api.http('/orders/rcpt_nothingHere000000000000');
    expect(unknown.status).toBe(404);
  });

  it('refuses posts that do not come from the page itself, and changes nothing', async () => {
    const session = await createSession();
    const form = await openPayForm(api, session.id);
    const attempts = [
      submitPayForm(api, session.id, form, { cookie: '' }),
      submitPayForm(api, session.id, form, { fields: { csrf_token: 'A'.repeat(32) } }),
      submitPayForm(api, session.id, form, { headers: { Origin: 'https://evil.example' } }),
      submitPayForm(api, session.id, form, { headers: { 'Sec-Fetch-Site': 'cross-site' } }),
    ];
    for (const [index, response] of (await Promise.all(attempts)).entries()) {
      expect(response.status, `attempt ${index}`).toBe(403);
      expect(((await response.json()) as any).error.code).toBe('cross_site_request');
    }
    expect((await getSession(session.id)).status).toBe('ready_for_payment');
    expect(await ordersOf(session.id)).toHaveLength(0);
  });

  it('does not pay a quote that changed since the page was shown', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const form = await openPayForm(api, session.id);
    const response = await submitPayForm(api, session.id, form, { fields: { quote: 'stale-quote-hash' } });
    expect(response.status).toBe(409);
    expect(await response.text()).toContain('The price changed');
    expect(await ordersOf(session.id)).toHaveLength(0);
  });

  it('answers 409 to cancelling a paid session, 422 to completing it, and leaves it paid', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    await payWithTestProcessor(api, session.id);
    const cancel = await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(409);
    expect(await cancel.json()).toMatchObject({ code: 'session_completed', param: 'id' });
    const complete = await api.http(`/checkout-sessions/${session.id}/complete`, { method: 'POST' });
    expect(complete.status).toBe(422);
    expect((await getSession(session.id)).status).toBe('completed');
  });

  it('does not pay a cancelled session', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const form = await openPayForm(api, session.id);
    await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    const response = await submitPayForm(api, session.id, form);
    expect(response.status).toBe(409);
    expect(await response.text()).toContain('cancelled');
    expect(await ordersOf(session.id)).toHaveLength(0);
  });
});

// Issue 29, findings 5 to 7: the test button takes no payment the store cannot honour, however many press at once.
describe('paying what the store can honour (test processor)', () => {
  /** Opens a pay form for each of `count` new sessions, then presses every button at once. */
  async function payAtOnce(count: number, body: object) {
    const sessions = [];
    for (let index = 0; index < count; index++) sessions.push(await createSession(body));
    return { sessions, forms: await Promise.all(sessions.map((session) => openPayForm(api, session.id))) };
  }
  const press = (sessions: any[], forms: Awaited<ReturnType<typeof openPayForm>>[]) =>
    Promise.all(sessions.map((session, index) => submitPayForm(api, session.id, forms[index]!)));

  it('sells the last 5 units to 5 of 20 buyers pressing at once; the others are charged nothing and told why', async () => {
    const { sessions, forms } = await payAtOnce(20, { items: [{ id: TRAVEL }] });
    await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 5 });
    try {
      const answers = await press(sessions, forms);
      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status === 303)).toHaveLength(5);
      expect(statuses.filter((status) => status === 409)).toHaveLength(15);
      const refused = answers.filter((answer) => answer.status === 409);
      for (const text of await Promise.all(refused.map((answer) => answer.text()))) expect(text).toContain('sold out');
      const orders = await db()('orders').whereIn(
        'session_id',
        sessions.map((session) => session.id),
      );
      expect(orders.map((order) => order.status)).toEqual(Array(5).fill('paid'));
      expect(await stockOf(TRAVEL)).toBe(0);
      const refusals = await db()('refused_payments').whereIn(
        'session_id',
        sessions.map((session) => session.id),
      );
      expect(refusals.map(({ reasons, refund_state }) => ({ reasons, refund_state }))).toEqual(
        Array(15).fill({ reasons: ['insufficient_stock'], refund_state: 'refunded' }),
      );
      // The pay page of a session the stock can no longer cover offers no button (409), and says why.
      const page = await api.http(`/pay/${refusals[0].session_id}`);
      expect(page.status).toBe(409);
      const html = await page.text();
      expect(html).not.toContain('<form');
      expect(html).toContain('refunded to you in full');
    } finally {
      await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 85 });
    }
  });

  it("redeems a promotion's last use once among 20 buyers pressing at once", async () => {
    const { sessions, forms } = await payAtOnce(20, { items: [{ id: TRAVEL }], promo_codes: ['10OFF'] });
    const redeemedBefore = await redemptions('10OFF');
    await db()('promotions')
      .where({ code: '10OFF' })
      .update({ usage_limit: redeemedBefore + 1 });
    try {
      const answers = await press(sessions, forms);
      expect(answers.filter((answer) => answer.status === 303)).toHaveLength(1);
      // The others: refused by the order statement, or, priced again once the last use was gone, a new total to
      // confirm (the code no longer applies). Either way nothing is paid.
      for (const text of await Promise.all(answers.filter((answer) => answer.status !== 303).map((a) => a.text())))
        expect(text).toMatch(/usage limit|The price changed/);
      expect(await redemptions('10OFF')).toBe(redeemedBefore + 1);
      const orders = await db()('orders').whereIn(
        'session_id',
        sessions.map((session) => session.id),
      );
      expect(orders.map((order) => order.promo_codes)).toEqual([['10OFF']]);
    } finally {
      await db()('promotions').where({ code: '10OFF' }).update({ usage_limit: null });
    }
  });

  it('answers a pay page 409 with no button when the stock cannot cover the session', async () => {
    const session = await createSession({ items: [{ id: TRAVEL, quantity: 3 }] });
    await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 2 });
    try {
      const page = await api.http(`/pay/${session.id}`);
      expect(page.status).toBe(409);
      const html = await page.text();
      expect(html).toContain('sold out');
      expect(html).not.toContain('<form');
    } finally {
      await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 85 });
    }
  });

  it('gives each of 20 simultaneous pay and cancel pairs one outcome: paid, or cancelled with nothing charged', async () => {
    const { sessions, forms } = await payAtOnce(20, { items: [{ id: TRAVEL }] });
    const stockBefore = await stockOf(TRAVEL);
    const answers = await Promise.all(
      sessions.map(async (session, index) => {
        const [paid, canceled] = await Promise.all([
          submitPayForm(api, session.id, forms[index]!),
          api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' }),
        ]);
        return { paid: paid.status, canceled: canceled.status };
      }),
    );
    let paidCount = 0;
    for (const [index, session] of sessions.entries()) {
      const status = (await getSession(session.id)).status;
      const orders = await ordersOf(session.id);
      if (status === 'completed') {
        paidCount++;
        expect(answers[index]).toEqual({ paid: 303, canceled: 409 });
        expect(orders.map((order) => order.status)).toEqual(['paid']);
      } else {
        expect(status).toBe('canceled');
        expect(answers[index]).toEqual({ paid: 409, canceled: 200 });
        expect(orders).toHaveLength(0);
      }
    }
    expect(await stockOf(TRAVEL)).toBe(stockBefore - paidCount);
  });

  it.skipIf(!serverUrl)(
    'lets a cancel that committed while the button waited win: nothing is charged, the session stays cancelled',
    async () => {
      const session = await createSession({ items: [{ id: TRAVEL }] });
      const form = await openPayForm(api, session.id);
      // The cancel holds the session's row (as its UPDATE does) while the button's payment waits for it.
      const cancel = await db().transaction();
      let paying: Promise<Response> | undefined;
      try {
        await cancel.raw('select from carts where id = ? for update', [session.id]);
        paying = submitPayForm(api, session.id, form);
        await lockWaiters(async (text) => (await db().raw(text)).rows, 1);
        await cancel('carts')
          .where({ id: session.id })
          .update({ status: 'canceled', canceled_at: new Date(), updated_at: new Date() });
        await cancel.commit();
      } catch (error) {
        await cancel.rollback();
        throw error;
      }
      const answer = await paying;
      expect(answer.status).toBe(409);
      expect(await answer.text()).toContain('had been cancelled');
      expect((await getSession(session.id)).status).toBe('canceled');
      expect(await ordersOf(session.id)).toHaveLength(0);
      expect(await refusalsOf(session.id)).toEqual([
        expect.objectContaining({ reasons: ['session_canceled'], refund_state: 'refunded' }),
      ]);
    },
  );
});

describe('the order path (what every processor reports into)', () => {
  const report = (sessionId: string, eventId: string, amountPaid: number, currency = 'usd') => ({
    processor: 'stripe' as const,
    eventId,
    eventType: 'checkout.session.completed',
    sessionId,
    paymentReference: `pi_${eventId}`,
    amountPaid,
    currency,
  });
  const totalOf = (session: any) => Math.round(session.totals.total.amount * 100);
  const quoteOf = async (sessionId: string) =>
    quoteCart(api.service.deps, (await findCartWithLines(db(), sessionId))!).quote;

  /** The payment statements (PAID_ORDERS) sent while `run` runs: how many payments each carried, in order sent. */
  async function paymentStatementsDuring(run: () => Promise<unknown>) {
    const sent: number[] = [];
    const count = ({ sql, bindings }: { sql: string; bindings: unknown[] }) => {
      if (sql === PAID_ORDERS) sent.push((JSON.parse(String(bindings[0])) as unknown[]).length);
    };
    db().on('query', count);
    try {
      await run();
      return sent;
    } finally {
      db().off('query', count);
    }
  }

  /** Reports paid at once (one batch, as concurrent deliveries queue) and each one's outcome, or its error. */
  const payAtOnce = (reports: PaymentReport[]) =>
    Promise.all(
      reports.map((paid) =>
        recordPayment(api.service.deps, paid).catch((error: unknown) => ({ kind: 'failed', error })),
      ),
    );

  it('gives one order, one stock decrement and one redemption for 20 concurrent deliveries', async () => {
    const session = await createSession({ items: [{ id: TWO_PACK, quantity: 3 }], promo_codes: ['10OFF'] });
    const [stockBefore, redeemedBefore] = [await stockOf(TWO_PACK), await redemptions('10OFF')];
    // Ten deliveries of one event and ten of a second event for the same payment, all at once.
    const deliveries = Array.from({ length: 20 }, (_, index) =>
      recordPayment(api.service.deps, report(session.id, index % 2 ? 'evt_a' : 'evt_b', totalOf(session))),
    );
    const outcomes = await Promise.all(deliveries);
    expect(outcomes.filter((outcome) => outcome.kind === 'created')).toHaveLength(1);
    expect(await ordersOf(session.id)).toHaveLength(1);
    expect(await stockOf(TWO_PACK)).toBe(stockBefore - 3);
    expect(await redemptions('10OFF')).toBe(redeemedBefore + 1);
  });

  it('keeps a payment whose amount or currency differs from the quote, flagged for review', async () => {
    const short = await createSession({ items: [{ id: TRAVEL }] });
    await recordPayment(api.service.deps, report(short.id, 'evt_short', totalOf(short) - 1));
    expect((await getSession(short.id)).order.status).toBe('needs_review');
    expect((await ordersOf(short.id))[0]).toMatchObject({
      review_reasons: ['amount_mismatch'],
      amount_paid: totalOf(short) - 1,
    });

    const euros = await createSession({ items: [{ id: TRAVEL }] });
    await recordPayment(api.service.deps, report(euros.id, 'evt_eur', totalOf(euros), 'eur'));
    expect((await ordersOf(euros.id))[0]).toMatchObject({
      status: 'needs_review',
      review_reasons: ['currency_mismatch'],
    });

    const receipt = await api.http(new URL((await getSession(euros.id)).order.permalink_url).pathname);
    expect(await receipt.text()).toContain('needs a person to check it');
  });

  it('refuses a payment the stock cannot cover: no order, no stock taken, recorded for a refund', async () => {
    const session = await createSession({ items: [{ id: TRAVEL, quantity: 5 }] });
    await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 2 });
    try {
      const outcome = await recordPayment(api.service.deps, report(session.id, 'evt_short_stock', totalOf(session)));
      expect(outcome).toEqual({ kind: 'refused', reasons: ['insufficient_stock'] });
      expect(await ordersOf(session.id)).toHaveLength(0);
      expect(await refusalsOf(session.id)).toEqual([
        expect.objectContaining({ payment_reference: 'pi_evt_short_stock', amount: totalOf(session) }),
      ]);
      expect(await stockOf(TRAVEL)).toBe(2);
      expect((await getSession(session.id)).status).toBe('ready_for_payment');
    } finally {
      await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 85 });
    }
  });

  // A payment is written by one statement (PAID_ORDERS), alone (the quote known, no agent to tell) or inside the
  // transaction that prices the session now or tells its agent: each case is paid both ways and must make the same
  // order (or refusal) and take the same stock. Paid at once, payments share that statement, which must make the
  // orders paying them one after another makes.
  interface PaymentCase {
    /** What the buyer paid, given the session's total; the total by default. */
    paid?: (total: number) => number;
    currency?: string;
    /** The session is cancelled after it was quoted, before the payment arrives. */
    cancel?: boolean;
    /** The quantity of the session's one line; 1 by default. */
    quantity?: number;
    /** The stock of the variant when the payment arrives (85 by default), and how it is kept. */
    stock?: number;
    variant?: { manage_inventory?: boolean; allow_backorder?: boolean };
    /** Units of the variant held for another session's open checkout when the payment arrives. */
    heldElsewhere?: number;
    /** Units of the variant the paying session's own checkout holds when the payment arrives. */
    heldOwn?: number;
    /** Uses of 10OFF left when the payment arrives (no limit by default). */
    usesLeft?: number;
  }

  /** What the payment becomes: an order with these review reasons, or a refusal for these reasons. */
  type Expected = { reasons: string[] } | { refused: string[] };

  /** Sets the stock, holds and promotion a case pays against (for the `paying` sessions); returns what undoes it. */
  async function arrange(payment: PaymentCase, paying: string[]) {
    await db()('variants')
      .where({ id: TRAVEL })
      .update({ inventory_quantity: payment.stock ?? 85, ...payment.variant });
    const other = payment.heldElsewhere ? await createSession({ items: [{ id: TRAVEL }] }) : undefined;
    if (other)
      await db()('payment_holds').insert({
        session_id: other.id,
        kind: 'variant',
        name: TRAVEL,
        quantity: payment.heldElsewhere,
        expires_at: new Date(Date.now() + 3_600_000),
      });
    for (const sessionId of payment.heldOwn ? paying : [])
      await db()('payment_holds').insert({
        session_id: sessionId,
        kind: 'variant',
        name: TRAVEL,
        quantity: payment.heldOwn,
        expires_at: new Date(Date.now() + 3_600_000),
      });
    if (payment.usesLeft !== undefined)
      await db()('promotions')
        .where({ code: '10OFF' })
        .update({ usage_limit: db().raw('times_redeemed + ?', [payment.usesLeft]) });
    return async () => {
      await db()('variants')
        .where({ id: TRAVEL })
        .update({ inventory_quantity: 85, manage_inventory: true, allow_backorder: false });
      await db()('payment_holds')
        .whereIn('session_id', [...paying, ...(other ? [other.id] : [])])
        .delete();
      await db()('promotions').where({ code: '10OFF' }).update({ usage_limit: null });
    };
  }

  /** What a refusal is made of, without what is new in each. */
  const refusedOf = ({ payment_reference, session_id, event_id, created_at, updated_at, ...refused }: any) => refused;

  /** What an order is made of, without what is new in each (ids, number, times, the processor's references). */
  const madeOf = ({
    id,
    order_number,
    session_id,
    permalink_token,
    payment_reference,
    created_at,
    updated_at,
    ...made
  }: any) => made;

  describe.each<[string, PaymentCase, Expected]>([
    ['clean', {}, { reasons: [] }],
    ['short by a cent', { paid: (total) => total - 1 }, { reasons: ['amount_mismatch'] }],
    ['in another currency', { currency: 'eur' }, { reasons: ['currency_mismatch'] }],
    ['in its currency, spelt in capitals', { currency: 'USD' }, { reasons: [] }],
    ['for a session cancelled meanwhile', { cancel: true }, { refused: ['session_canceled'] }],
    ['beyond the stock', { quantity: 5, stock: 2 }, { refused: ['insufficient_stock'] }],
    ['beyond the stock, on backorder', { quantity: 5, stock: 2, variant: { allow_backorder: true } }, { reasons: [] }],
    ['beyond a stock not managed', { quantity: 5, stock: 2, variant: { manage_inventory: false } }, { reasons: [] }],
    [
      'beyond the stock not held for others',
      { quantity: 2, stock: 3, heldElsewhere: 2 },
      { refused: ['insufficient_stock'] },
    ],
    ['within the stock held for others', { quantity: 1, stock: 5, heldElsewhere: 2 }, { reasons: [] }],
    // An operator lowered the stock below what is held: a session whose own hold covers it needs only the stock.
    [
      'beyond the stock not held for others, within its own hold',
      { quantity: 2, stock: 6, heldElsewhere: 5, heldOwn: 2 },
      { reasons: [] },
    ],
    ['with its promotion used up', { usesLeft: 0 }, { refused: ['promotion_exhausted'] }],
    [
      'cancelled, beyond the stock, its promotion used up',
      { cancel: true, quantity: 5, stock: 2, usesLeft: 0 },
      { refused: ['session_canceled', 'insufficient_stock', 'promotion_exhausted'] },
    ],
  ])('a payment %s', (_, payment, expected) => {
    const refused = 'refused' in expected;
    /** Pays a fresh session of the case, with its quote (the one statement) or priced now (the transaction). */
    async function pay(withQuote: boolean) {
      const session = await createSession({
        items: [{ id: TRAVEL, quantity: payment.quantity ?? 1 }],
        promo_codes: ['10OFF'],
      });
      const { quote } = quoteCart(api.service.deps, (await findCartWithLines(db(), session.id))!);
      if (payment.cancel)
        expect((await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' })).status).toBe(200);
      const undo = await arrange(payment, [session.id]);
      try {
        const redeemedBefore = await redemptions('10OFF');
        const paid = (payment.paid ?? ((total) => total))(totalOf(session));
        let outcome: { kind: string } | undefined;
        const statements = await statementsDuring(db(), ['carts', 'orders', 'variants'], async () => {
          outcome = await recordPayment(api.service.deps, {
            ...report(session.id, `evt_${session.id}`, paid, payment.currency),
            ...(withQuote ? { quote } : {}),
          });
        });
        const [order] = await ordersOf(session.id);
        const [refusal] = await refusalsOf(session.id);
        const holdsLeft = (await db()('payment_holds').where({ session_id: session.id })).length;
        const taken = { stockLeft: await stockOf(TRAVEL), redeemed: (await redemptions('10OFF')) - redeemedBefore };
        return {
          kind: outcome!.kind,
          statements,
          made: order && madeOf(order),
          refusal: refusal && refusedOf(refusal),
          paid,
          taken,
          holdsLeft,
          status: (await getSession(session.id)).status,
        };
      } finally {
        await undo();
      }
    }

    // Priced now, a promotion used up no longer applies: the session's total is then another.
    it.skipIf(payment.usesLeft !== undefined)(
      'makes the same order in the one statement as in the transaction',
      async () => {
        const alone = await pay(true);
        const inTransaction = await pay(false);
        expect([alone.statements, inTransaction.statements > 1]).toEqual([1, true]);
        expect(alone.made).toStrictEqual(inTransaction.made);
        expect(alone.refusal).toStrictEqual(inTransaction.refusal);
        expect(alone.taken).toStrictEqual(inTransaction.taken);
        expect(inTransaction.status).toBe(alone.status);
      },
    );

    it(refused ? 'refuses it: no order, nothing taken, recorded for a refund' : 'makes its order', async () => {
      const { kind, made, refusal, paid, taken, holdsLeft, status } = await pay(true);
      // Taken or refused, the payment releases its session's holds.
      expect(holdsLeft).toBe(0);
      if ('refused' in expected) {
        expect({ kind, made, taken, status }).toEqual({
          kind: 'refused',
          made: undefined,
          taken: { stockLeft: payment.stock ?? 85, redeemed: 0 },
          status: payment.cancel ? 'canceled' : 'ready_for_payment',
        });
        expect(refusal).toStrictEqual({
          processor: 'stripe',
          reasons: expected.refused,
          amount: paid,
          currency: (payment.currency ?? 'usd').toLowerCase(),
          refund_state: 'pending',
          refund_reference: null,
        });
      } else {
        expect({ kind, refusal, status }).toEqual({ kind: 'created', refusal: undefined, status: 'completed' });
        expect(made).toMatchObject({
          review_reasons: expected.reasons,
          status: expected.reasons.length ? 'needs_review' : 'paid',
        });
      }
    });

    /** Pays three fresh sessions of the case with their quotes: at once (one statement), or one after another. */
    async function payThree(atOnce: boolean) {
      const sessions = [];
      for (let index = 0; index < 3; index++)
        sessions.push(
          await createSession({ items: [{ id: TRAVEL, quantity: payment.quantity ?? 1 }], promo_codes: ['10OFF'] }),
        );
      const reports: PaymentReport[] = [];
      for (const session of sessions) {
        const quote = await quoteOf(session.id);
        if (payment.cancel)
          expect((await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' })).status).toBe(200);
        const paid = (payment.paid ?? ((total) => total))(totalOf(session));
        reports.push({ ...report(session.id, `evt_${session.id}`, paid, payment.currency), quote });
      }
      const undo = await arrange(
        payment,
        sessions.map((session) => session.id),
      );
      try {
        const redeemedBefore = await redemptions('10OFF');
        const outcomes: Array<{ kind: string }> = [];
        const sent = await paymentStatementsDuring(async () => {
          if (atOnce) outcomes.push(...(await payAtOnce(reports)));
          else for (const paid of reports) outcomes.push(await recordPayment(api.service.deps, paid));
        });
        const orders = [];
        const refusals = [];
        for (const session of sessions) {
          orders.push(...(await ordersOf(session.id)));
          refusals.push(...(await refusalsOf(session.id)));
        }
        const taken = { stockLeft: await stockOf(TRAVEL), redeemed: (await redemptions('10OFF')) - redeemedBefore };
        return {
          sent,
          kinds: outcomes.map((outcome) => outcome.kind),
          made: orders.map(madeOf),
          refused: refusals.map(refusedOf),
          numbers: orders.map((order) => Number(order.order_number.slice('SF-'.length))),
          taken,
        };
      } finally {
        await undo();
      }
    }

    it('makes the same orders paid at once, in one statement, as paid one after another', async () => {
      const atOnce = await payThree(true);
      const oneByOne = await payThree(false);
      expect([atOnce.sent, oneByOne.sent]).toEqual([[3], [1, 1, 1]]);
      expect(atOnce.kinds).toEqual(Array(3).fill(refused ? 'refused' : 'created'));
      expect(atOnce.made).toStrictEqual(oneByOne.made);
      expect(atOnce.refused).toStrictEqual(oneByOne.refused);
      expect(atOnce.taken).toStrictEqual(oneByOne.taken);
      expect(atOnce.numbers).toEqual([...atOnce.numbers].sort((a, b) => a - b));
    });
  });

  it('shares out the last of the stock between payments of one statement in their order', async () => {
    const sessions = [];
    for (const quantity of [2, 2, 2, 1])
      sessions.push(await createSession({ items: [{ id: TRAVEL, quantity }, { id: TWO_PACK }] }));
    const reports: PaymentReport[] = [];
    for (const session of sessions)
      reports.push({ ...report(session.id, `evt_${session.id}`, totalOf(session)), quote: await quoteOf(session.id) });
    const twoPackBefore = await stockOf(TWO_PACK);
    await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 5 });
    let outcomes: Array<{ kind: string }> = [];
    const sent = await paymentStatementsDuring(async () => (outcomes = await payAtOnce(reports)));
    try {
      expect(sent).toEqual([4]);
      // 5 → 3 → 1, then 2 wanted of 1: refused, taking nothing; the last unit goes to the fourth.
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['created', 'created', 'refused', 'created']);
      for (const [index, session] of sessions.entries()) {
        expect(await ordersOf(session.id)).toHaveLength(index === 2 ? 0 : 1);
        expect(await refusalsOf(session.id)).toHaveLength(index === 2 ? 1 : 0);
      }
      expect(await stockOf(TRAVEL)).toBe(0);
      expect(await stockOf(TWO_PACK)).toBe(twoPackBefore - 3);
    } finally {
      await db()('variants').where({ id: TRAVEL }).update({ inventory_quantity: 85 });
    }
  });

  it("shares out a promotion's last uses between payments of one statement in their order", async () => {
    const sessions = await Promise.all(
      Array.from({ length: 3 }, () => createSession({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] })),
    );
    const reports: PaymentReport[] = [];
    for (const session of sessions)
      reports.push({ ...report(session.id, `evt_${session.id}`, totalOf(session)), quote: await quoteOf(session.id) });
    const redeemedBefore = await redemptions('10OFF');
    await db()('promotions')
      .where({ code: '10OFF' })
      .update({ usage_limit: redeemedBefore + 2 });
    try {
      const outcomes = await payAtOnce(reports);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['created', 'created', 'refused']);
      expect(await redemptions('10OFF')).toBe(redeemedBefore + 2);
      expect((await refusalsOf(sessions[2].id))[0]).toMatchObject({ reasons: ['promotion_exhausted'] });
    } finally {
      await db()('promotions').where({ code: '10OFF' }).update({ usage_limit: null });
    }
  });

  it('pays a session or an event met again in one batch as one after another: once, then existing or duplicate', async () => {
    const [a, b, c, d] = await Promise.all(
      Array.from({ length: 4 }, () => createSession({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] })),
    );
    const paid = async (session: any, eventId: string) => ({
      ...report(session.id, eventId, totalOf(session)),
      quote: await quoteOf(session.id),
    });
    const reports = [
      await paid(a, 'evt_twice_a'),
      await paid(b, 'evt_twice_b'),
      await paid(a, 'evt_twice_a'), // the same event again
      await paid(a, 'evt_twice_a2'), // another event for the same payment
      await paid(c, 'evt_twice_c'),
      await paid(d, 'evt_twice_c'), // an event id another session's payment took
    ];
    const [stockBefore, redeemedBefore] = [await stockOf(TRAVEL), await redemptions('10OFF')];
    let outcomes: Array<{ kind: string; order?: { id: string } }> = [];
    const sent = await paymentStatementsDuring(async () => (outcomes = await payAtOnce(reports)));
    // Four runs without a session or an event twice: [a, b], [a], [a2, c], [d]; in one transaction.
    expect(sent).toEqual([2, 1, 2, 1]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual([
      'created',
      'created',
      'duplicate',
      'existing',
      'created',
      'duplicate',
    ]);
    expect(outcomes[3]!.order!.id).toBe(outcomes[0]!.order!.id);
    for (const session of [a, b, c]) expect(await ordersOf(session.id)).toHaveLength(1);
    expect(await ordersOf(d.id)).toHaveLength(0);
    expect((await getSession(d.id)).status).toBe('ready_for_payment');
    expect(await stockOf(TRAVEL)).toBe(stockBefore - 3);
    expect(await redemptions('10OFF')).toBe(redeemedBefore + 3);
  });

  it.skipIf(!serverUrl)(
    'takes every lock of a batch with a session met twice before its first run: it holds no stock while it waits for a later session',
    async () => {
      const [a, b] = await Promise.all(
        Array.from({ length: 2 }, () => createSession({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] })),
      );
      const paid = async (session: any, eventId: string) => ({
        ...report(session.id, eventId, totalOf(session)),
        quote: await quoteOf(session.id),
      });
      // Two runs: [a], then [a again, b].
      const reports = [await paid(a, 'evt_locks_a'), await paid(a, 'evt_locks_a2'), await paid(b, 'evt_locks_b')];
      const locksTaken = { count: 0 };
      const countLocks = ({ sql }: { sql: string }) => {
        if (sql === PAYMENT_LOCKS) locksTaken.count++;
      };
      // Another transaction holds b's session, and then wants the variant's stock, as an order of b's would.
      const other = await db().transaction();
      let paying: ReturnType<typeof payAtOnce> | undefined;
      db().on('query', countLocks);
      try {
        await other.raw('select from carts where id = ? for update', [b.id]);
        paying = payAtOnce(reports);
        await lockWaiters(async (text) => (await db().raw(text)).rows, 1);
        // Had the first run locked the stock before the batch waited for b, this would wait for it and, within less
        // than deadlock_timeout (1 s), give up (55P03); the batch would then be a deadlock's victim.
        await other.raw(`set local lock_timeout = '500ms'`);
        await other.raw('select from variants where id = ? for no key update', [TRAVEL]);
      } finally {
        await other.rollback();
      }
      const outcomes = await paying;
      db().off('query', countLocks);
      expect(locksTaken.count).toBe(1);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['created', 'existing', 'created']);
    },
  );

  it('retries a batch that fails payment by payment: the failing one fails with its own error, the others pay', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 6 }, () => createSession({ items: [{ id: TRAVEL }], promo_codes: ['10OFF'] })),
    );
    const [a, b, c, d, e, broken] = sessions;
    const paid = async (session: any, eventId: string) => ({
      ...report(session.id, eventId, totalOf(session)),
      quote: await quoteOf(session.id),
    });
    // A quote whose line has no title: its order line cannot be stored (title is required).
    const unstorable = await paid(broken, 'evt_broken');
    unstorable.quote.lines[0]!.title = null as unknown as string;
    const alone = await payAtOnce([unstorable]);
    const failure = (outcome: any) => ({
      kind: outcome.kind,
      code: outcome.error?.code,
      column: outcome.error?.column,
    });
    expect(failure(alone[0])).toEqual({ kind: 'failed', code: '23502', column: 'title' });

    const first = [await paid(a, 'evt_retried_a'), unstorable, await paid(b, 'evt_retried_b')];
    const firstSent = await paymentStatementsDuring(async () => {
      const outcomes = await payAtOnce(first);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['created', 'failed', 'created']);
      expect(failure(outcomes[1])).toEqual(failure(alone[0]));
    });
    expect(firstSent).toEqual([3, 1, 1, 1]);

    // Failing in the batch's second run ([c, d], then [c again, broken]): the first run's orders are not kept either,
    // so each payment, retried alone, is answered as if the batch had never been sent.
    const second = [
      await paid(c, 'evt_retried_c'),
      await paid(d, 'evt_retried_d'),
      await paid(c, 'evt_retried_c2'),
      unstorable,
      await paid(e, 'evt_retried_e'),
    ];
    const secondSent = await paymentStatementsDuring(async () => {
      const outcomes = await payAtOnce(second);
      expect([outcomes[0]!.kind, outcomes[2]!.kind].sort()).toEqual(['created', 'existing']);
      expect([outcomes[1]!.kind, outcomes[4]!.kind]).toEqual(['created', 'created']);
      expect(failure(outcomes[3])).toEqual(failure(alone[0]));
    });
    expect(secondSent).toEqual([2, 3, 1, 1, 1, 1, 1]);

    for (const session of [a, b, c, d, e]) expect(await ordersOf(session!.id)).toHaveLength(1);
    expect(await ordersOf(broken!.id)).toHaveLength(0);
    expect((await getSession(broken!.id)).status).toBe('ready_for_payment');
    expect(await db()('processor_events').where({ event_id: 'evt_broken' })).toHaveLength(0);
  });

  it('refuses a payment for an unknown session and stores nothing', async () => {
    await expect(recordPayment(api.service.deps, report('cart_unknown', 'evt_unknown', 100))).rejects.toThrow(NotFound);
    expect(await db()('processor_events').where({ event_id: 'evt_unknown' })).toHaveLength(0);
  });

  it('moves the order to partially_refunded, then refunded, once per refund event', async () => {
    const session = await createSession({ items: [{ id: TRAVEL }] });
    const total = totalOf(session);
    await recordPayment(api.service.deps, report(session.id, 'evt_paid_r', total));
    const refund = (eventId: string, amountRefunded: number) =>
      recordRefund(api.service.deps, {
        processor: 'stripe',
        eventId,
        eventType: 'charge.refunded',
        paymentReference: 'pi_evt_paid_r',
        amountRefunded,
      });
    await refund('evt_r1', 500);
    expect((await getSession(session.id)).order.status).toBe('partially_refunded');
    expect((await refund('evt_r1', 500)).kind).toBe('duplicate');
    await refund('evt_r2', total);
    expect((await ordersOf(session.id))[0]).toMatchObject({ status: 'refunded', amount_refunded: total });
  });
});
