// A checkout session as the ACP and UCP bindings see it: the stored cart, priced now, in integer minor units straight
// from the pricing module (never major units). Pure: src/domain/ucp-checkout.ts and src/domain/acp-checkout.ts render
// it in each protocol's shape, so both bindings always quote the same numbers for the same session.
import { currencyOf, toMajorUnits, type MinorUnits } from './money.js';
import type { ShippingCode, ShippingOption } from './fulfilment.js';
import type { QuoteFulfilment } from './orders.js';
import type { PricedCart, PricedLine } from './pricing.js';
import type { AppliedPromotion, PromoMessage } from './promotions.js';
import type { DestinationProblem } from './destination.js';

/** Where the session stands, whatever the protocol calls it (D3 of the design). */
export type SessionState = 'requires_escalation' | 'incomplete' | 'canceled' | 'completed';

/** Discount rejection codes shared by both protocols (ACP `DiscountErrorCode`; UCP warnings, freeform where UCP has none). */
export type DiscountRejection =
  | 'discount_code_invalid'
  | 'discount_code_expired'
  | 'discount_code_usage_limit_reached'
  | 'discount_code_minimum_not_met'
  | 'discount_code_user_ineligible'
  | 'discount_code_combination_disallowed'
  | 'discount_code_already_applied';

export interface BuyerDetails {
  email?: string;
  first_name?: string;
  last_name?: string;
  phone_number?: string;
}

/** The order a paid session became (the pay page turns a session into an order). */
export interface SessionOrder {
  id: string;
  orderNumber?: string;
  permalinkUrl: string;
  status?: string;
}

export interface SessionLine extends PricedLine {
  id: string;
  productId: string;
  sku: string | null;
  imageUrl: string | null;
}

/**
 * Where a session ships and how, as it is priced: `fulfilment` (the address, the option, the tax by jurisdiction) once
 * it has an address (null: the totals are an estimate), each option offered there with what it costs these goods, and
 * the option the buyer chose (kept without an address too).
 */
export interface SessionShipping {
  fulfilment: QuoteFulfilment | null;
  offered: Array<{ option: ShippingOption; amount: MinorUnits }>;
  chosenOption: ShippingCode | null;
}

export interface ProtocolSession {
  id: string;
  state: SessionState;
  /** ISO 4217, lower case (each binding chooses its case). */
  currency: string;
  lines: SessionLine[];
  totals: PricedCart['totals'];
  /** The stored codes, exactly as sent, in order. */
  codes: string[];
  applied: (AppliedPromotion & { amount: MinorUnits }) | null;
  rejections: Array<{ index: number; code: string; reason: DiscountRejection; content: string }>;
  /** Stored lines whose variant is no longer sold in the region: left out of the lines and the totals. */
  unavailableLines: number;
  buyer: BuyerDetails | null;
  fulfillmentDetails: unknown;
  shipping: SessionShipping;
  /**
   * What is wrong with the address the session was sent and could not be priced for (ACP keeps its fulfillment_details
   * as sent): the session is then not ready for payment until an address the store ships to replaces it.
   */
  addressProblems: DestinationProblem[];
  createdAt: Date;
  updatedAt: Date;
  continueUrl: string;
  order: SessionOrder | null;
}

export const HANDOFF_CONTENT =
  "Payment is taken only on the store's secure page. Send the buyer to continue_url to review and pay; nothing has been charged.";

/** D7: the domain's rejection in the protocols' words. */
export function discountRejectionOf(message: PromoMessage): DiscountRejection {
  switch (message.code) {
    case 'promo_code_invalid':
    case 'promo_code_not_yet_active':
      return 'discount_code_invalid';
    case 'promo_code_expired':
      return 'discount_code_expired';
    case 'promo_code_exhausted':
      return 'discount_code_usage_limit_reached';
    case 'promo_code_not_applicable':
      return message.cause === 'wrong_currency' ? 'discount_code_user_ineligible' : 'discount_code_minimum_not_met';
    case 'promo_code_not_combinable':
      return 'discount_code_combination_disallowed';
    case 'promo_code_duplicate':
      return 'discount_code_already_applied';
  }
}

/** D3: a stored status, whether any line can be priced, and whether the address sent is one the store ships to. */
export function sessionStateOf(storedStatus: string, pricedLines: number, addressProblems = 0): SessionState {
  if (storedStatus === 'canceled') return 'canceled';
  if (storedStatus === 'completed') return 'completed';
  return pricedLines === 0 || addressProblems > 0 ? 'incomplete' : 'requires_escalation';
}

/** "10% off", "5.00 USD off" (D7). */
export function discountTitle(applied: AppliedPromotion, currency: string): string {
  if (applied.kind === 'percentage') return `${applied.value / 100}% off`;
  return `${toMajorUnits(applied.value, currency).toFixed(currencyOf(currency).exponent)} ${currency.toUpperCase()} off`;
}

/** What the store knows of a session, besides its priced lines. */
export interface SessionFacts extends Pick<
  ProtocolSession,
  | 'id'
  | 'codes'
  | 'unavailableLines'
  | 'buyer'
  | 'fulfillmentDetails'
  | 'shipping'
  | 'createdAt'
  | 'updatedAt'
  | 'continueUrl'
  | 'order'
> {
  storedStatus: string;
  lines: Array<Pick<SessionLine, 'id' | 'productId' | 'sku' | 'imageUrl'>>;
  applied: AppliedPromotion | null;
  promoMessages: PromoMessage[];
  addressProblems?: DestinationProblem[];
}

export function toProtocolSession(facts: SessionFacts, priced: PricedCart): ProtocolSession {
  return {
    id: facts.id,
    state: sessionStateOf(facts.storedStatus, priced.lines.length, facts.addressProblems?.length ?? 0),
    currency: priced.currencyCode.toLowerCase(),
    // The facts first and the priced line spread after them (it has none of their fields): Node 20 builds a literal
    // that starts with a spread, `{ ...line, ...facts }`, a property at a time (src/domain/pricing.ts).
    lines: priced.lines.map((line, index) => {
      const { id, productId, sku, imageUrl } = facts.lines[index]!;
      return { id, productId, sku, imageUrl, ...line };
    }),
    totals: priced.totals,
    codes: facts.codes,
    applied:
      facts.applied && priced.totals.discount > 0
        ? {
            code: facts.applied.code,
            kind: facts.applied.kind,
            value: facts.applied.value,
            amount: priced.totals.discount,
          }
        : null,
    rejections: facts.promoMessages.map((message) => ({
      index: message.index,
      code: message.requested,
      reason: discountRejectionOf(message),
      content: message.message,
    })),
    unavailableLines: facts.unavailableLines,
    buyer: facts.buyer && Object.keys(facts.buyer).length ? facts.buyer : null,
    fulfillmentDetails: facts.fulfillmentDetails,
    shipping: facts.shipping,
    addressProblems: facts.addressProblems ?? [],
    createdAt: facts.createdAt,
    updatedAt: facts.updatedAt,
    continueUrl: facts.continueUrl,
    order: facts.order,
  };
}

/**
 * A session shown with the problems of an address it was sent and not given (a create priced without it, an update
 * that left it as it was): an open one is then not ready for payment.
 */
export function withAddressProblems(session: ProtocolSession, problems: DestinationProblem[]): ProtocolSession {
  if (!problems.length || session.state !== 'requires_escalation') return { ...session, addressProblems: problems };
  return { ...session, state: 'incomplete', addressProblems: problems };
}

/** RFC 9535 JSONPath of a request field, from its segments: ['line_items', 0, 'item', 'id'] → `$.line_items[0].item.id`. */
export function jsonPath(segments: Array<string | number>): string {
  return segments.reduce<string>(
    (path, segment) =>
      typeof segment === 'number'
        ? `${path}[${segment}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(segment)
          ? `${path}.${segment}`
          : `${path}['${segment.replaceAll("'", "\\'")}']`,
    '$',
  );
}
