// What the pay page does for the configured processor. Stripe sends the buyer to its hosted
// checkout; the built-in test processor shows a button that records a payment through the same order path as a
// webhook. Either way, the order is made by services/orders.ts.
import * as carts from '../../db/repositories/carts.js';
import type { Deps } from '../../deps.js';
import type { CheckoutSession, PaidSession } from '../../domain/checkout-session.js';
import { quoteHash } from '../../domain/orders.js';
import { newId } from '../../domain/ids.js';
import { presentCart, quoteCart } from '../checkout.js';
import { Forbidden } from '../../domain/errors.js';
import { recordPayment, unknownSession } from '../orders.js';
import { stripeCheckoutUrl } from './stripe.js';

export type PayPage =
  /** Paid: show the receipt. */
  | { kind: 'receipt'; session: PaidSession }
  /** Cancelled: nothing to pay. */
  | { kind: 'closed'; session: CheckoutSession }
  /** Test processor: the cart and a button; the form carries the quote's hash, so the buyer pays what they saw. */
  | { kind: 'test'; session: CheckoutSession; quoteHash: string }
  /** Stripe: the buyer is sent to the hosted checkout for this quote. */
  | { kind: 'redirect'; url: string };

async function findSession(deps: Deps, id: string) {
  const found = await carts.findCartWithLines(deps.db, id);
  if (!found || found.cart.status === 'open') throw unknownSession(id);
  return found;
}

export async function openPayPage(deps: Deps, id: string): Promise<PayPage> {
  const found = await findSession(deps, id);
  const { cart } = found;
  if (cart.status === 'completed') return { kind: 'receipt', session: presentCart(deps, found) as PaidSession };
  if (cart.status === 'canceled') return { kind: 'closed', session: presentCart(deps, found) };
  const { session, quote } = quoteCart(deps, found);
  if (deps.stripe)
    return { kind: 'redirect', url: await stripeCheckoutUrl(deps, deps.stripe, id, quote, cart.buyer_email) };
  return { kind: 'test', session, quoteHash: quoteHash(quote) };
}

export type TestPayment =
  { kind: 'paid' } | { kind: 'unchanged'; page: PayPage } | { kind: 'quote_changed'; page: PayPage };

/**
 * The test processor's button: records a payment of exactly the quote the buyer saw, through the order path a
 * processor webhook takes. A quote that changed since the page was shown is not paid: the page is shown again.
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
  await recordPayment(deps, {
    processor: 'test',
    eventId: newId('evt_test'),
    eventType: 'test.payment_succeeded',
    sessionId: id,
    paymentReference: newId('pay_test'),
    quote,
    amountPaid: quote.totals.total,
    currency: quote.currencyCode,
  });
  return { kind: 'paid' };
}
