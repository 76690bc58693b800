// Orders, pure: what a paid quote becomes, whether the payment matches it, what the stock can cover, and the order's
// status as refunds arrive. Integer minor units throughout.
import { createHash } from 'node:crypto';
import type { MinorUnits } from './money.js';
import type { PricedCart, PricedLine } from './pricing.js';

/** A priced session as a buyer is asked to pay it: the lines (with the session's line ids) and the applied codes. */
export interface Quote {
  currencyCode: string;
  regionId: string;
  lines: Array<PricedLine & { id: string }>;
  totals: PricedCart['totals'];
  promoCodes: string[];
}

export type OrderStatus = 'paid' | 'needs_review' | 'partially_refunded' | 'refunded';
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
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('base64url');
}

export interface PaymentFacts {
  amountPaid: MinorUnits;
  currency: string;
}

// paymentProblems, planStock and initialStatus decide the payments that need JavaScript; the common payment is decided
// by the same rules written in SQL (PAID_ORDERS, in src/db/repositories/orders.ts). test/payments.test.ts pays each case
// both ways, and at once against one after another, and requires the same orders: change them together.

/** A payment that does not match the quote is kept, but flagged: never silently accepted, never lost. */
export function paymentProblems(quote: Quote, payment: PaymentFacts): ReviewReason[] {
  if (payment.currency.toLowerCase() !== quote.currencyCode.toLowerCase()) return ['currency_mismatch'];
  return payment.amountPaid === quote.totals.total ? [] : ['amount_mismatch'];
}

export interface StockRow {
  id: string;
  manage_inventory: boolean;
  allow_backorder: boolean;
  inventory_quantity: number;
}

export interface StockPlan {
  /** New inventory_quantity per managed variant. */
  updates: Array<{ id: string; inventoryQuantity: number }>;
  /** True when a variant without backorder has less stock than the paid quantity (it is set to zero, and flagged). */
  short: boolean;
}

/** What a paid order takes from stock: managed variants only; backorder may go negative, otherwise floor at zero. */
export function planStock(lines: Array<{ variantId: string; quantity: number }>, variants: StockRow[]): StockPlan {
  const wanted = new Map<string, number>();
  for (const line of lines) wanted.set(line.variantId, (wanted.get(line.variantId) ?? 0) + line.quantity);
  let short = false;
  const updates = variants
    .filter((variant) => variant.manage_inventory && wanted.has(variant.id))
    .map((variant) => {
      const left = variant.inventory_quantity - wanted.get(variant.id)!;
      if (left < 0 && !variant.allow_backorder) short = true;
      return { id: variant.id, inventoryQuantity: variant.allow_backorder ? left : Math.max(left, 0) };
    });
  return { updates, short };
}

/** The status of a new order: `needs_review` as soon as anything is wrong with it. */
export function initialStatus(reasons: ReviewReason[]): OrderStatus {
  return reasons.length ? 'needs_review' : 'paid';
}

/**
 * The status once `refunded` (cumulative, as the processor reports it) of `paid` has been given back. Refunds keep a
 * `needs_review` order in review until it is refunded in full.
 */
export function statusAfterRefund(current: OrderStatus, paid: MinorUnits, refunded: MinorUnits): OrderStatus {
  if (refunded >= paid) return 'refunded';
  if (refunded <= 0) return current;
  return current === 'needs_review' ? 'needs_review' : 'partially_refunded';
}

/** Order numbers are shown to people: this, then the next number of the database's sequence (SF-1001). */
export const ORDER_NUMBER_PREFIX = 'SF-';
