// Orders, pure: the quote a buyer pays, its hash, and the order's status as refunds arrive. Integer minor units
// throughout.
import { createHash } from 'node:crypto';
import type { MinorUnits } from './money.js';
import type { Destination } from './destination.js';
import type { ShippingCode } from './fulfilment.js';
import type { JurisdictionTax, PricedCart, PricedLine } from './pricing.js';

/**
 * What a quote priced for a destination adds (docs/fulfilment-and-tax.md): where it goes, the option chosen, and the
 * tax by jurisdiction. Stored with the order as charged (orders.fulfilment), never recomputed.
 */
export interface QuoteFulfilment {
  shippingAddress: Destination;
  shippingOption: {
    code: ShippingCode;
    title: string;
    description: string;
    minBusinessDays: number;
    maxBusinessDays: number;
  };
  /** Whether the amounts include tax (EU, UK, Japan): totals.tax is then inside them, not added. */
  taxIncluded: boolean;
  /** The part of totals.tax levied on shipping (none of it is in a line's tax). */
  shippingTax: MinorUnits;
  taxes: JurisdictionTax[];
}

/** A priced session as a buyer is asked to pay it: the lines (with the session's line ids) and the applied codes. */
export interface Quote {
  currencyCode: string;
  regionId: string;
  lines: Array<PricedLine & { id: string }>;
  totals: PricedCart['totals'];
  promoCodes: string[];
  /** Present when the session has a destination: the quote is then no estimate. */
  fulfilment?: QuoteFulfilment | undefined;
}

export type OrderStatus = 'paid' | 'needs_review' | 'partially_refunded' | 'refunded' | 'canceled';
/**
 * Why a paid order needs a person: the amount or currency paid is not the quote's. (Orders made before payments the
 * store cannot honour were refunded may also carry `insufficient_stock` or `session_canceled`.)
 */
export type ReviewReason = 'amount_mismatch' | 'currency_mismatch' | 'insufficient_stock' | 'session_canceled';

/** Identifies a quote: the same lines, amounts and codes give the same hash (a processor checkout can be reused). */
export function quoteHash(quote: Quote): string {
  const canonical = {
    currency: quote.currencyCode,
    region: quote.regionId,
    lines: quote.lines.map((line) => [
      line.id,
      line.variantId,
      line.quantity,
      line.unitAmount,
      line.baseAmount,
      line.discount,
      line.tax,
      line.total,
    ]),
    totals: [quote.totals.subtotal, quote.totals.discount, quote.totals.shipping, quote.totals.tax, quote.totals.total],
    codes: quote.promoCodes,
    // Only a quote for a destination has it, so a quote without one hashes as it did before.
    ...(quote.fulfilment ? { fulfilment: quote.fulfilment } : {}),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

// Whether a payment is taken, refused or flagged, and what it takes from stock and promotions, is decided in one place:
// the order statement (PAID_ORDERS, src/db/repositories/paid-orders.ts), for every processor and every kind of payment.

/**
 * The status once `refunded` (cumulative, as the processor reports it) of `paid` has been given back. Refunds keep a
 * `needs_review` order in review until it is refunded in full.
 */
export function statusAfterRefund(current: OrderStatus, paid: MinorUnits, refunded: MinorUnits): OrderStatus {
  // A cancelled order's refund (the merchant's, reported again by the processor) leaves it cancelled.
  if (current === 'canceled') return current;
  if (refunded >= paid) return 'refunded';
  if (refunded <= 0) return current;
  return current === 'needs_review' ? 'needs_review' : 'partially_refunded';
}

/** Order numbers are shown to people: this, then the next number of the database's sequence (SF-1001). */
export const ORDER_NUMBER_PREFIX = 'SF-';
