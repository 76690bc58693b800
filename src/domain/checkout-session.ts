// The CheckoutSession representation: a priced cart in major units, with the human payment hand-off.
import type { components } from '../../codegen/types.js';
import { toMajorUnits } from './money.js';
import type { PricedCart, Totals } from './pricing.js';
import type { PromoMessage } from './promotions.js';

export type CheckoutSession = components['schemas']['CheckoutSession'];
export type SessionMessage = components['schemas']['CheckoutMessage'];
/** A session a human paid: `completed`, with its order. */
export type PaidSession = CheckoutSession & { order: NonNullable<CheckoutSession['order']> };

export const HANDOFF_NOTE =
  'Payment is a human step: send the buyer to checkout_url to pay; this API cannot complete or charge the session.';

export const PAID_NOTE =
  'Paid: the buyer completed payment at checkout_url and the session became the order in `order`.';

// A cancelled session can never be paid: its note must not send anyone to checkout_url.
const CANCELED_NOTE =
  'Canceled: this session can no longer be paid and nothing was charged; create a new session to buy.';

export interface SessionFacts {
  id: string;
  status: CheckoutSession['status'];
  regionId: string;
  /** Line ids in the same order as the priced lines. */
  lineIds: string[];
  appliedCodes: string[];
  messages: Array<PromoMessage | SessionMessage>;
  checkoutUrl: string;
  /** The order a paid (`completed`) session became. */
  order?: CheckoutSession['order'];
}

export function checkoutUrlFor(template: string, id: string): string {
  return template.replaceAll('{id}', encodeURIComponent(id));
}

function totalsInMajorUnits(totals: Totals, currency: string): CheckoutSession['totals'] {
  const amount = (value: number) => ({ amount: toMajorUnits(value, currency), currency });
  return {
    subtotal: amount(totals.subtotal),
    discount: amount(totals.discount),
    shipping: amount(totals.shipping),
    tax: amount(totals.tax),
    total: amount(totals.total),
  };
}

export function toCheckoutSession(facts: SessionFacts, priced: PricedCart): CheckoutSession {
  const currency = priced.currencyCode;
  const major = (value: number) => toMajorUnits(value, currency);
  return {
    id: facts.id,
    object: 'checkout_session',
    status: facts.status,
    currency,
    region_id: facts.regionId,
    line_items: priced.lines.map((line, index) => ({
      id: facts.lineIds[index]!,
      item: { id: line.variantId, title: line.title, quantity: line.quantity },
      base_amount: major(line.baseAmount),
      discount: major(line.discount),
      subtotal: major(line.subtotal),
      tax: major(line.tax),
      total: major(line.total),
    })),
    totals: totalsInMajorUnits(priced.totals, currency),
    promo_codes: facts.appliedCodes,
    messages: facts.messages.map(({ type, code, param, message }) => ({ type, code, param, message })),
    payment_provider: {
      provider: 'human_handoff',
      checkout_url: facts.checkoutUrl,
      note: facts.order ? PAID_NOTE : facts.status === 'canceled' ? CANCELED_NOTE : HANDOFF_NOTE,
    },
    ...(facts.order ? { order: facts.order } : {}),
  };
}
