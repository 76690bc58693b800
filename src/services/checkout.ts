// Checkout sessions priced and presented, read, cancelled. A session is created by src/services/checkout/create.ts; every
// surface prices a stored cart here (priceStoredCart), and each wire format presents it: the REST, MCP and agent
// session (presentCart), and the protocols' session (presentProtocolSession) that the ACP and UCP bindings render.
import * as carts from '../db/repositories/carts.js';
import type { OrderWithLines } from '../db/repositories/orders.js';
import { findPurchasableVariants, type PurchasableVariantRow, type RegionRow } from '../db/repositories/catalog.js';
import type { Db } from '../db/knex.js';
import { variantReferences, type ItemReference } from '../domain/cart-items.js';
import {
  checkoutUrlFor,
  toCheckoutSession,
  type CheckoutSession,
  type PaidSession,
  type SessionMessage,
} from '../domain/checkout-session.js';
import type { Quote } from '../domain/orders.js';
import { priceCart, type LineToPrice, type PricedCart } from '../domain/pricing.js';
import { applyPromoCodes, type AppliedPromotion, type PromoMessage, type Promotion } from '../domain/promotions.js';
import { toProtocolSession, type ProtocolSession } from '../domain/protocol-session.js';
import type { Deps } from '../deps.js';
import { Conflict, NotFound, Unprocessable } from '../domain/errors.js';
import { requireRegion } from './catalog.js';
import { expireProcessorCheckouts } from './payments/expiry.js';

export type { CheckoutSession };

/** The variants the references could name, with their stock and their price in the region. */
export function candidateVariants(db: Db, refs: ItemReference[], region: RegionRow): Promise<PurchasableVariantRow[]> {
  return findPurchasableVariants(db, variantReferences(refs), region.id);
}

function regionTerms(region: RegionRow) {
  return {
    currencyCode: region.currency_code,
    taxRateBps: region.tax_rate_bps,
    shippingAmount: region.shipping_amount,
    freeShippingThreshold: region.free_shipping_threshold,
  };
}

/** Prices lines with the requested codes as they stand now: which codes apply, and why the others do not. */
function priceWithPromotions(
  deps: Deps,
  lines: LineToPrice[],
  region: RegionRow,
  codes: string[],
  stored: Map<string, Promotion>,
): { priced: PricedCart; applied: string[]; promotion: AppliedPromotion | null; messages: PromoMessage[] } {
  const subtotal = lines.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0);
  const outcome = applyPromoCodes(codes, stored, {
    now: new Date(deps.now()),
    currencyCode: region.currency_code,
    subtotal,
  });
  return {
    priced: priceCart(lines, regionTerms(region), outcome.applied),
    applied: outcome.applied ? [outcome.applied.code] : [],
    promotion: outcome.applied,
    messages: outcome.messages,
  };
}

function sessionNotFound(id: string): NotFound {
  return new NotFound(`No checkout session with id ${id}.`, { param: 'id' });
}

/** Lines whose variant is no longer sold in the region are left out and reported, rather than priced at zero. */
function priceableLines(rows: ReadonlyArray<Readonly<carts.CartLineRow>>): {
  lines: Array<LineToPrice & { id: string }>;
  messages: SessionMessage[];
} {
  const messages: SessionMessage[] = [];
  const lines = rows.flatMap((row, index) => {
    if (row.price_amount === null) {
      messages.push({
        type: 'warning',
        code: 'item_unavailable',
        param: `line_items[${index}]`,
        message: `${row.variant_id} is no longer sold in this region; it was removed from the totals.`,
      });
      return [];
    }
    return [
      { id: row.id, variantId: row.variant_id, title: row.title, quantity: row.quantity, unitAmount: row.price_amount },
    ];
  });
  return { lines, messages };
}

export interface PricedStoredCart {
  region: RegionRow;
  /** The lines that could be priced, in order, as stored. */
  rows: carts.CartLineRow[];
  lineMessages: SessionMessage[];
  priced: PricedCart;
  applied: string[];
  promotion: AppliedPromotion | null;
  messages: PromoMessage[];
}

/** A stored cart priced now, from what the session read brought: current prices, current promotion rules. */
export function priceStoredCart(deps: Deps, stored: carts.StoredSession): PricedStoredCart {
  const { cart, lines: rows, promotions } = stored;
  const region = requireRegion(stored.region, cart.region_id);
  const { lines, messages: lineMessages } = priceableLines(rows);
  const pricedLineIds = new Set(lines.map((line) => line.id));
  return {
    region,
    rows: rows.filter((row) => pricedLineIds.has(row.id)),
    lineMessages,
    ...priceWithPromotions(deps, lines, region, cart.promo_codes, promotions),
  };
}

export interface QuotedSession {
  session: CheckoutSession;
  /** The same numbers in minor units: what the buyer is asked to pay. */
  quote: Quote;
}

/** A stored cart priced now (current prices, current promotion rules), as the API shows it and as a quote to pay. */
export function quoteCart(deps: Deps, stored: carts.StoredSession): QuotedSession {
  const { cart } = stored;
  const { region, rows, lineMessages, priced, applied, messages } = priceStoredCart(deps, stored);
  const session = toCheckoutSession(
    {
      id: cart.id,
      status: cart.status as CheckoutSession['status'],
      regionId: region.id,
      lineIds: rows.map((line) => line.id),
      appliedCodes: applied,
      messages: [...lineMessages, ...messages],
      checkoutUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, cart.id),
    },
    priced,
  );
  const quote: Quote = {
    currencyCode: priced.currencyCode,
    regionId: region.id,
    lines: priced.lines.map((line, index) => ({ ...line, id: rows[index]!.id })),
    totals: priced.totals,
    promoCodes: applied,
  };
  return { session, quote };
}

/** Where the buyer finds the receipt of an order: an unguessable URL. */
export function orderPermalink(deps: Deps, token: string): string {
  return `${deps.config.baseUrl}/orders/${token}`;
}

export function orderSummary(deps: Deps, order: OrderWithLines['order']): NonNullable<CheckoutSession['order']> {
  return {
    id: order.id,
    order_number: order.order_number,
    status: order.status,
    permalink_url: orderPermalink(deps, order.permalink_token),
  };
}

/** The order's own record as a priced cart: the amounts charged, never recomputed. */
export function orderAsPricedCart({ order, lines }: OrderWithLines): PricedCart {
  return {
    currencyCode: order.currency,
    lines: lines.map((line) => ({
      variantId: line.variant_id,
      title: line.title,
      quantity: line.quantity,
      unitAmount: line.unit_amount,
      baseAmount: line.base_amount,
      discount: line.discount,
      subtotal: line.subtotal,
      tax: line.tax,
      total: line.total,
    })),
    totals: {
      subtotal: order.subtotal,
      discount: order.discount,
      shipping: order.shipping,
      tax: order.tax,
      total: order.total,
    },
  };
}

/** A paid session: the order's amounts and its summary. */
export function presentPaidSession(deps: Deps, paid: OrderWithLines): PaidSession {
  const { order, lines } = paid;
  return toCheckoutSession(
    {
      id: order.session_id,
      status: 'completed',
      regionId: order.region_id,
      lineIds: lines.map((line) => line.id),
      appliedCodes: order.promo_codes,
      messages: [],
      checkoutUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, order.session_id),
      order: orderSummary(deps, order),
    },
    orderAsPricedCart(paid),
  ) as PaidSession;
}

/** A stored session as the API shows it: priced now, or, once paid, exactly as its order was charged. */
export function presentCart(deps: Deps, stored: carts.StoredSession): CheckoutSession {
  if (stored.order) return presentPaidSession(deps, stored.order);
  return quoteCart(deps, stored).session;
}

/** A stored session in the protocols' terms (ACP and UCP render it): priced now, or once paid as its order was charged. */
export function presentProtocolSession(deps: Deps, found: carts.StoredSession): ProtocolSession {
  const { cart, lines: allLines, order: paid } = found;
  const current = priceStoredCart(deps, found);
  // A paid session shows what was charged: the order's lines and amounts, never recomputed.
  const priced = paid ? orderAsPricedCart(paid) : current.priced;
  const rowOf = (variantId: string) => allLines.find((row) => row.variant_id === variantId)!;
  const rows = priced.lines.map((line) => rowOf(line.variantId));
  return toProtocolSession(
    {
      id: cart.id,
      storedStatus: cart.status,
      lines: rows.map((row) => ({ id: row.id, productId: row.product_id, sku: row.sku, imageUrl: row.thumbnail })),
      unavailableLines: paid ? 0 : allLines.length - rows.length,
      codes: cart.promo_codes,
      applied: current.promotion,
      promoMessages: paid ? [] : current.messages,
      buyer: carts.buyerOf(cart),
      fulfillmentDetails: cart.fulfillment_details ?? null,
      createdAt: new Date(cart.created_at),
      updatedAt: new Date(cart.updated_at),
      continueUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, cart.id),
      order: paid
        ? {
            id: paid.order.id,
            orderNumber: paid.order.order_number,
            status: paid.order.status,
            permalinkUrl: orderPermalink(deps, paid.order.permalink_token),
          }
        : null,
    },
    { ...priced, lines: priced.lines.map((line, index) => ({ ...line, title: rows[index]!.product_title })) },
  );
}

async function findSessionCart(deps: Deps, id: string): Promise<carts.CartRow> {
  const cart = await carts.findCart(deps.db, id);
  if (!cart || cart.status === 'open') throw sessionNotFound(id);
  return cart;
}

export async function getCheckoutSession(deps: Deps, id: string): Promise<CheckoutSession> {
  const found = await carts.findCartWithLines(deps.db, id);
  if (!found || found.cart.status === 'open') throw sessionNotFound(id);
  return presentCart(deps, found);
}

export function sessionCompleted(id: string): Conflict {
  return new Conflict(
    'session_completed',
    `Checkout session ${id} is paid and became an order; it can no longer be changed or cancelled.`,
    undefined,
    { param: 'id' },
  );
}

/**
 * Cancels the session and abandons its cart. Permanent; cancelling again answers the same cancelled session. Its
 * processor checkouts are expired, so they can no longer be paid (a payment that arrives even so is refunded).
 */
export async function cancelCheckoutSession(deps: Deps, id: string): Promise<CheckoutSession> {
  await carts.cancelSession(deps.db, id, new Date(deps.now()));
  const session = await getCheckoutSession(deps, id); // 404 for an unknown id (or an agent's open cart, which the update left alone)
  if (session.status === 'completed') throw sessionCompleted(id);
  await expireProcessorCheckouts(deps, id);
  return session;
}

/** Completion never happens through the API: payment is a human hand-off at checkout_url. */
export async function completeCheckoutSession(deps: Deps, id: string): Promise<never> {
  await findSessionCart(deps, id);
  throw new Unprocessable(
    'delegated_payment_not_supported',
    'This store does not accept delegated payment: a human must pay at payment_provider.checkout_url.',
    {
      param: 'payment_provider',
      details: { supported_payment_modes: ['human_handoff'] },
    },
  );
}
