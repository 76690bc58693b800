// What the pay page does for the configured processor. Stripe sends the buyer to its hosted
// checkout; the built-in test processor shows a button that records a payment through the same order path as a
// webhook. Either way, the order is made by services/orders.ts, and the store asks for no payment it could not honour:
// the stock and the promotions' usage limits are checked before a checkout is shown (and held for a Stripe checkout's
// life), and again when the payment arrives.
import * as carts from '../../db/repositories/carts.js';
import * as payments from '../../db/repositories/payments.js';
import { reserveForCheckout, type Shortfall } from '../../db/repositories/payment-holds.js';
import type { Deps } from '../../deps.js';
import type { CheckoutSession, PaidSession } from '../../domain/checkout-session.js';
import { quoteHash } from '../../domain/orders.js';
import { presentCart, quoteCart } from '../checkout.js';
import { withTerms } from '../checkout/destination.js';
import { Forbidden } from '../../domain/errors.js';
import { recordPayment, unknownSession } from '../orders.js';
import { stripeCheckout } from './stripe.js';

/** A payment the store refused and refunded, as the buyer is told of it. */
export interface RefundNotice {
  amount: number;
  currency: string;
  reasons: payments.RefusalReason[];
}

/** Why the session cannot be paid now: its stock or promotion is taken, or it changed too often. */
export type Unpayable = 'sold_out' | 'promotion_used_up' | 'too_many_changes';

export type PayPage =
  /** Paid: show the receipt. */
  | { kind: 'receipt'; session: PaidSession }
  /** Cancelled: nothing to pay. */
  | { kind: 'closed'; session: CheckoutSession; refunded?: RefundNotice }
  /** Nothing the store can sell for this session now; nothing is asked of the buyer. */
  | { kind: 'unpayable'; session: CheckoutSession; why: Unpayable; refunded?: RefundNotice }
  /** Test processor: the cart and a button; the form carries the quote's hash, so the buyer pays what they saw. */
  | { kind: 'test'; session: CheckoutSession; quoteHash: string; refunded?: RefundNotice }
  /** Stripe: the buyer is sent to the hosted checkout for this quote. */
  | { kind: 'redirect'; url: string };

async function findSession(deps: Deps, id: string) {
  const found = await carts.findCartWithLines(deps.db, id);
  if (!found || found.cart.status === 'open') throw unknownSession(id);
  return withTerms(deps, found);
}

function unpayable(shortfalls: Shortfall[]): Unpayable {
  return shortfalls.some((shortfall) => shortfall.kind === 'variant') ? 'sold_out' : 'promotion_used_up';
}

/** The latest payment of the session the store refused (and refunded), for the page to say so. */
async function refundNotice(deps: Deps, id: string): Promise<RefundNotice | undefined> {
  const [latest] = await payments.refusedPaymentsOf(deps.db, id);
  return latest && { amount: latest.amount, currency: latest.currency, reasons: latest.reasons };
}

export async function openPayPage(deps: Deps, id: string): Promise<PayPage> {
  const found = await findSession(deps, id);
  const { cart } = found;
  if (cart.status === 'completed') return { kind: 'receipt', session: presentCart(deps, found) as PaidSession };
  const refunded = found.cart.status === 'canceled' || !deps.stripe ? await refundNotice(deps, id) : undefined;
  if (cart.status === 'canceled') return { kind: 'closed', session: presentCart(deps, found), refunded };
  const { session, quote } = quoteCart(deps, found);
  if (deps.stripe) {
    const checkout = await stripeCheckout(deps, deps.stripe, id, quote, cart.buyer_email);
    if (checkout.kind === 'redirect') return checkout;
    // Paid or cancelled since it was read: show it as it is now.
    if (checkout.kind === 'not_ready') return openPayPage(deps, id);
    const why = checkout.kind === 'too_many_checkouts' ? 'too_many_changes' : unpayable(checkout.shortfalls);
    return { kind: 'unpayable', session, why, refunded: await refundNotice(deps, id) };
  }
  const check = await reserveForCheckout(deps.db, { sessionId: id, quote, at: new Date(deps.now()) });
  if (check.kind === 'unavailable') return { kind: 'unpayable', session, why: unpayable(check.shortfalls), refunded };
  return { kind: 'test', session, quoteHash: quoteHash(quote), refunded };
}

export type TestPayment =
  | { kind: 'paid' }
  | { kind: 'unchanged'; page: PayPage }
  | { kind: 'quote_changed'; page: PayPage }
  /** The store could not honour it (cancelled meanwhile, stock or promotion taken): nothing was charged. */
  | { kind: 'refused'; page: PayPage };

/**
 * The test processor's button: records a payment of exactly the quote the buyer saw, through the order path a
 * processor webhook takes. A quote that changed since the page was shown is not paid: the page is shown again. A
 * payment the order path refuses is refunded at once (the test processor's refund moves no money either).
 */
export async function payInTestMode(deps: Deps, id: string, shownQuoteHash: string): Promise<TestPayment> {
  if (deps.config.payments.mode !== 'test') {
    throw new Forbidden(
      'test_payments_disabled',
      'This store takes payment through its payment processor; test payments are off.',
      {
        resolution: 'Open the pay page and pay there.',
      },
    );
  }
  const found = await findSession(deps, id);
  if (found.cart.status !== 'ready_for_payment') return { kind: 'unchanged', page: await openPayPage(deps, id) };
  const { quote } = quoteCart(deps, found);
  if (quoteHash(quote) !== shownQuoteHash) return { kind: 'quote_changed', page: await openPayPage(deps, id) };
  const paymentReference = deps.ids.next('pay_test');
  const outcome = await recordPayment(deps, {
    processor: 'test',
    eventId: deps.ids.next('evt_test'),
    eventType: 'test.payment_succeeded',
    sessionId: id,
    paymentReference,
    quote,
    amountPaid: quote.totals.total,
    currency: quote.currencyCode,
  });
  if (outcome.kind !== 'refused') return { kind: 'paid' };
  await payments.markRefunded(deps.db, 'test', paymentReference, deps.ids.next('re_test'), new Date(deps.now()));
  return { kind: 'refused', page: await openPayPage(deps, id) };
}
