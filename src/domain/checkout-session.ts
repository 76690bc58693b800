// The CheckoutSession representation: a priced cart in major units, with the human payment hand-off.
import type { components } from '../../codegen/types.js';
import type { ShippingCode, ShippingOption } from './fulfilment.js';
import { RATE_SCALE } from './fulfilment.js';
import { toMajorUnits } from './money.js';
import type { QuoteFulfilment } from './orders.js';
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
  /** Priced for a destination: where, the option, the tax by jurisdiction; undefined for an estimate. */
  fulfilment?: QuoteFulfilment | undefined;
  /** The option the buyer chose, if any (shown even before there is an address). */
  chosenOption?: ShippingCode | null;
  /** The destination's options with what each costs these goods. */
  offered?: Array<{ option: ShippingOption; amount: number }>;
}

/** A rate in thousandths of a percent as a percentage: 19000 → 19, 9975 → 9.975 (exact in decimal). */
function percent(rate: number): number {
  return Number((rate / (RATE_SCALE / 100)).toFixed(3));
}

/** What a session priced for a destination shows beside its totals. */
function destinationFields(facts: SessionFacts, currency: string): Partial<CheckoutSession> {
  const amount = (value: number) => ({ amount: toMajorUnits(value, currency), currency });
  const { fulfilment } = facts;
  const chosen = fulfilment?.shippingOption.code ?? facts.chosenOption ?? undefined;
  const fields: Partial<CheckoutSession> = {
    totals_estimated: fulfilment === undefined,
    tax_included: fulfilment?.taxIncluded ?? false,
    ...(chosen ? { shipping_option: chosen } : {}),
  };
  if (!fulfilment) return fields;
  const address = fulfilment.shippingAddress;
  return {
    ...fields,
    shipping_address: {
      recipient_name: address.recipientName,
      line1: address.line1,
      line2: address.line2,
      city: address.city,
      region: address.region,
      postal_code: address.postalCode,
      country: address.country,
    },
    ...(facts.order
      ? {}
      : {
          shipping_options: (facts.offered ?? []).map(({ option, amount: charge }) => ({
            id: option.code,
            title: option.title,
            description: option.description,
            amount: amount(charge),
            estimated_delivery: {
              min_business_days: option.minBusinessDays,
              max_business_days: option.maxBusinessDays,
            },
          })),
        }),
    shipping_tax: amount(fulfilment.shippingTax),
    tax_lines: fulfilment.taxes.map((tax) => ({
      jurisdiction: tax.jurisdiction,
      tax_code: tax.taxCode,
      name: tax.name,
      rate: percent(tax.rate),
      taxable_amount: amount(tax.taxableAmount),
      amount: amount(tax.amount),
    })),
  };
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
    ...destinationFields(facts, currency),
  };
}
