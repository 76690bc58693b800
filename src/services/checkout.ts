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
import type { Quote, QuoteFulfilment } from '../domain/orders.js';
import { chooseShippingOption, shippingCharge, type ShippingCode, type ShippingOption } from '../domain/fulfilment.js';
import {
  priceQuote,
  retitledLine,
  type DestinationPricing,
  type LineToPrice,
  type PricedCart,
  type Quote as PriceQuote,
} from '../domain/pricing.js';
import { applyPromoCodes, type AppliedPromotion, type PromoMessage, type Promotion } from '../domain/promotions.js';
import { toProtocolSession, type ProtocolSession } from '../domain/protocol-session.js';
import type { DestinationProblem } from '../domain/destination.js';
import type { Deps } from '../deps.js';
import { Conflict, NotFound, Unprocessable } from '../domain/errors.js';
import { requireRegion } from './catalog.js';
import { expireProcessorCheckouts } from './payments/expiry.js';
import { checkedDestination, withTerms, type ShippingAddressInput } from './checkout/destination.js';

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

/** A quote as the session's lines and totals show it: a line's unit is its shelf price (tax included where it is). */
function asPricedCart(quote: PriceQuote): PricedCart {
  if (quote.estimate) return { currencyCode: quote.currencyCode, lines: quote.lines, totals: quote.totals };
  return {
    currencyCode: quote.currencyCode,
    lines: quote.lines.map((line) => ({
      variantId: line.variantId,
      title: line.title,
      quantity: line.quantity,
      unitAmount: line.shelfUnitAmount,
      baseAmount: line.baseAmount,
      discount: line.discount,
      subtotal: line.subtotal,
      tax: line.tax,
      total: line.total,
    })),
    totals: quote.totals,
  };
}

/** The destination's terms and the option chosen, or null: the session is priced as an estimate. */
function destinationPricing(cart: carts.CartRow, terms: carts.StoredSession['terms']): DestinationPricing | null {
  if (!cart.shipping_address || !terms) return null;
  const shippingOption = chooseShippingOption(terms, cart.shipping_option) ?? chooseShippingOption(terms, null);
  return shippingOption ? { terms, shippingOption } : null;
}

/** What a quote for a destination records beside its amounts. */
function fulfilmentOf(cart: carts.CartRow, quote: PriceQuote): QuoteFulfilment | undefined {
  if (quote.estimate || !cart.shipping_address) return undefined;
  const { option } = quote.shipping;
  return {
    shippingAddress: cart.shipping_address,
    shippingOption: {
      code: option.code,
      title: option.title,
      description: option.description,
      minBusinessDays: option.minBusinessDays,
      maxBusinessDays: option.maxBusinessDays,
    },
    taxIncluded: quote.taxIncluded,
    shippingTax: quote.shipping.tax,
    taxes: quote.taxes,
  };
}

/** Each of the destination's options with what it would cost these goods (free from its threshold). */
export interface OfferedOption {
  option: ShippingOption;
  amount: number;
}

/** Prices lines with the requested codes as they stand now: which codes apply, and why the others do not. */
function priceWithPromotions(
  deps: Deps,
  lines: LineToPrice[],
  region: RegionRow,
  codes: string[],
  stored: Map<string, Promotion>,
  destination: DestinationPricing | null,
): {
  priced: PricedCart;
  quoted: PriceQuote;
  applied: string[];
  promotion: AppliedPromotion | null;
  messages: PromoMessage[];
} {
  const subtotal = lines.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0);
  const outcome = applyPromoCodes(codes, stored, {
    now: new Date(deps.now()),
    currencyCode: region.currency_code,
    subtotal,
  });
  const quoted = priceQuote(lines, regionTerms(region), outcome.applied, destination);
  return {
    priced: asPricedCart(quoted),
    quoted,
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
  /** The same price with what a destination adds (tax by jurisdiction, the shipping option), or an estimate. */
  quoted: PriceQuote;
  /** With a destination, what it records beside the amounts. */
  fulfilment: QuoteFulfilment | undefined;
  /** With a destination, each of its options with what it would cost these goods. */
  offered: OfferedOption[];
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
  const destination = destinationPricing(cart, stored.terms);
  const priced = priceWithPromotions(deps, lines, region, cart.promo_codes, promotions, destination);
  const goods = priced.quoted.totals.subtotal - priced.quoted.totals.discount;
  return {
    region,
    rows: rows.filter((row) => pricedLineIds.has(row.id)),
    lineMessages,
    ...priced,
    fulfilment: fulfilmentOf(cart, priced.quoted),
    offered: (destination?.terms.shippingOptions ?? []).map((option) => ({
      option,
      amount: shippingCharge(option, goods, lines.length),
    })),
  };
}

export interface QuotedSession {
  session: CheckoutSession;
  /** The same numbers in minor units: what the buyer is asked to pay. */
  quote: Quote;
}

/** A stored cart priced now, as the API shows it. */
function sessionOf(deps: Deps, cart: carts.CartRow, pricedCart: PricedStoredCart): CheckoutSession {
  const { region, rows, lineMessages, priced, applied, messages, fulfilment, offered } = pricedCart;
  return toCheckoutSession(
    {
      id: cart.id,
      status: cart.status as CheckoutSession['status'],
      regionId: region.id,
      lineIds: rows.map((line) => line.id),
      appliedCodes: applied,
      messages: [...lineMessages, ...messages],
      checkoutUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, cart.id),
      fulfilment,
      chosenOption: cart.shipping_option ?? null,
      offered,
    },
    priced,
  );
}

/** A stored cart priced now, as a quote to pay: the same numbers in minor units. */
function quoteOf({ region, rows, priced, applied, fulfilment }: PricedStoredCart): Quote {
  return {
    currencyCode: priced.currencyCode,
    regionId: region.id,
    // The id first and the line spread after it (a priced line has no id): Node 20 builds a literal that starts with a
    // spread, `{ ...line, id }`, a property at a time (src/domain/pricing.ts).
    lines: priced.lines.map((line, index) => ({ id: rows[index]!.id, ...line })),
    totals: priced.totals,
    promoCodes: applied,
    ...(fulfilment ? { fulfilment } : {}),
  };
}

/** A stored cart priced now (current prices, current promotion rules), as the API shows it and as a quote to pay. */
export function quoteCart(deps: Deps, stored: carts.StoredSession): QuotedSession {
  const priced = priceStoredCart(deps, stored);
  return { session: sessionOf(deps, stored.cart, priced), quote: quoteOf(priced) };
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
    fulfilment_status: order.fulfilment_status ?? 'unfulfilled',
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
      fulfilment: order.fulfilment ?? undefined,
      chosenOption: order.fulfilment?.shippingOption.code ?? null,
      offered: [],
    },
    orderAsPricedCart(paid),
  ) as PaidSession;
}

/** A stored session as the API shows it: priced now, or, once paid, exactly as its order was charged. */
export function presentCart(deps: Deps, stored: carts.StoredSession): CheckoutSession {
  if (stored.order) return presentPaidSession(deps, stored.order);
  return sessionOf(deps, stored.cart, priceStoredCart(deps, stored));
}

/**
 * A stored session in the protocols' terms (ACP and UCP render it): priced now, or once paid as its order was charged.
 * `addressProblems`: what is wrong with an address the session was sent and could not be priced for.
 */
export function presentProtocolSession(
  deps: Deps,
  found: carts.StoredSession,
  addressProblems: DestinationProblem[] = [],
): ProtocolSession {
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
      // A paid session ships as its order was charged; an open one as it is priced now.
      shipping: paid
        ? {
            fulfilment: paid.order.fulfilment ?? null,
            offered: [],
            chosenOption: paid.order.fulfilment?.shippingOption.code ?? null,
          }
        : {
            fulfilment: current.fulfilment ?? null,
            offered: current.offered,
            chosenOption: cart.shipping_option ?? null,
          },
      addressProblems: paid || cart.status !== 'ready_for_payment' ? [] : addressProblems,
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
    {
      currencyCode: priced.currencyCode,
      lines: priced.lines.map((line, index) => retitledLine(line, rows[index]!.product_title)),
      totals: priced.totals,
    },
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
  return presentCart(deps, await withTerms(deps, found));
}

/** A change of a session's destination or shipping option (REST's update, MCP's update_checkout_session). */
export interface SessionUpdate {
  shipping_address?: ShippingAddressInput | null | undefined;
  shipping_option?: ShippingCode | undefined;
}

function sessionCanceled(id: string): Conflict {
  return new Conflict(
    'session_canceled',
    `Checkout session ${id} is cancelled; it can no longer be changed. Create a new session to buy.`,
    undefined,
    { param: 'id' },
  );
}

/**
 * Sets or changes a session's destination and shipping option and answers it re-priced. The address is checked first
 * (a problem is the caller's 400, naming the field, and nothing changes); the session is locked while it changes, so
 * a payment recorded meanwhile is never overwritten (a paid or cancelled session cannot change: 409).
 */
export async function updateCheckoutSession(deps: Deps, id: string, update: SessionUpdate): Promise<CheckoutSession> {
  const requireChangeable = (cart: carts.CartRow | undefined): carts.CartRow => {
    if (!cart || cart.status === 'open') throw sessionNotFound(id);
    if (cart.status === 'completed') throw sessionCompleted(id);
    if (cart.status === 'canceled') throw sessionCanceled(id);
    return cart;
  };
  // Checked before the transaction (a session's region never changes): nothing is locked while the address is read.
  const { region_id: regionId } = requireChangeable(await carts.findCart(deps.db, id));
  const change = await checkedDestination(deps.db, regionId, update.shipping_address, update.shipping_option);
  await deps.db.transaction(async (trx) => {
    requireChangeable(await carts.findCartForUpdate(trx, id));
    await carts.updateCart(trx, id, { ...change, updated_at: new Date(deps.now()) });
  });
  return getCheckoutSession(deps, id);
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
