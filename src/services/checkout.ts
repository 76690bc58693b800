// Checkout sessions: create, read (re-priced live), cancel. The REST handlers, the agent API and the MCP checkout
// server all go through these functions, so every surface quotes the same numbers.
import type { Knex } from 'knex';
import * as carts from '../db/repositories/carts.js';
import { findPurchasableVariants, type PurchasableVariantRow, type RegionRow } from '../db/repositories/catalog.js';
import { findPromotions } from '../db/repositories/promotions.js';
import type { Db } from '../db/knex.js';
import { itemPath, referenceOf, resolveLines, type ItemInput, type ItemReference, type RequestedLine } from '../domain/cart-items.js';
import { checkoutUrlFor, toCheckoutSession, type CheckoutSession, type SessionMessage } from '../domain/checkout-session.js';
import { newId } from '../domain/ids.js';
import { priceCart, type LineToPrice, type PricedCart } from '../domain/pricing.js';
import { applyPromoCodes, canonicalCode, type PromoMessage, type Promotion } from '../domain/promotions.js';
import type { Deps } from '../deps.js';
import { NotFound, Unprocessable } from '../domain/errors.js';
import { resolveRegion } from './catalog.js';
import { cachedQuery } from './query-cache.js';

export type { CheckoutSession };

const PROMO_ALIASES = ['promo_codes', 'promo_code', 'discount_code', 'discount_codes', 'coupon_code', 'coupon_codes'] as const;

export interface CheckoutSessionInput {
  items: ItemInput[];
  promo_codes?: string | string[];
  promo_code?: string | string[];
  discount_code?: string | string[];
  discount_codes?: string | string[];
  coupon_code?: string | string[];
  coupon_codes?: string | string[];
  region_id?: string;
  buyer?: { email?: string };
}

export interface CreateOptions {
  /** A write to store atomically with the session, given the session as it will be returned (records idempotency). */
  alongside?: (session: CheckoutSession) => Knex.QueryBuilder;
}

/** Every requested code, from `promo_codes` and its aliases, in that order. */
export function requestedPromoCodes(input: CheckoutSessionInput): string[] {
  return PROMO_ALIASES.flatMap((name) => {
    const value = input[name];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  });
}

function refsByKind(refs: ItemReference[]) {
  const of = (kind: ItemReference['kind']) => refs.filter((ref) => ref.kind === kind).map((ref) => ref.value);
  return { variantIds: of('variant_id'), skus: of('sku'), productHandles: of('handle') };
}

/** The variants the references could name, with their stock and their price in the region. */
export function candidateVariants(db: Db, refs: ItemReference[], region: RegionRow): Promise<PurchasableVariantRow[]> {
  return findPurchasableVariants(db, refsByKind(refs), region.id);
}

async function resolveItems(deps: Deps, items: ItemInput[], region: RegionRow): Promise<RequestedLine[]> {
  const refs = items.map((item, index) => referenceOf(item, itemPath(index)));
  return resolveLines(items, await candidateVariants(deps.db, refs, region), region.currency_code);
}

export interface NewCart {
  region: RegionRow;
  /** The variants the lines were resolved to, in line order. */
  requested: RequestedLine[];
  cart: Omit<carts.CartRow, 'canceled_at'>;
  lines: carts.NewLine[];
}

/** A new cart, not yet stored, from a create request: a public checkout session, or an agent's open cart (`owner`). */
export async function newCart(deps: Deps, input: CheckoutSessionInput, owner: Pick<carts.CartRow, 'status' | 'client_id'>): Promise<NewCart> {
  const region = await resolveRegion(deps.db, input.region_id, 'region_id');
  const requested = await resolveItems(deps, input.items, region);
  const now = new Date(deps.now());
  const cart = { id: newId('cart'), region_id: region.id, ...owner, buyer_email: input.buyer?.email ?? null, promo_codes: requestedPromoCodes(input), created_at: now, updated_at: now };
  const lines = requested.map(({ variant, quantity }) => ({ id: newId('cali'), variant_id: variant.id, quantity }));
  return { region, requested, cart, lines };
}

function regionTerms(region: RegionRow) {
  return {
    currencyCode: region.currency_code,
    taxRateBps: region.tax_rate_bps,
    shippingAmount: region.shipping_amount,
    freeShippingThreshold: region.free_shipping_threshold,
  };
}

/** Promotion definitions are configuration, like regions: kept 60 s (their time windows are still checked per request). */
function storedPromotionsFor(deps: Deps, codes: string[]): Promise<Map<string, Promotion>> {
  const canonical = [...new Set(codes.map(canonicalCode))].sort();
  if (canonical.length === 0) return Promise.resolve(new Map());
  return cachedQuery(deps.db, `promotions:${canonical.join(',')}`, () => findPromotions(deps.db, canonical));
}

/** Prices lines with the requested codes as they stand now: which codes apply, and why the others do not. */
function priceWithPromotions(deps: Deps, lines: LineToPrice[], region: RegionRow, codes: string[], stored: Map<string, Promotion>): { priced: PricedCart; applied: string[]; messages: PromoMessage[] } {
  const subtotal = lines.reduce((sum, line) => sum + line.unitAmount * line.quantity, 0);
  const outcome = applyPromoCodes(codes, stored, { now: new Date(deps.now()), currencyCode: region.currency_code, subtotal });
  return { priced: priceCart(lines, regionTerms(region), outcome.applied), applied: outcome.applied ? [outcome.applied.code] : [], messages: outcome.messages };
}

export async function createCheckoutSession(deps: Deps, input: CheckoutSessionInput, options: CreateOptions = {}): Promise<CheckoutSession> {
  const status = 'ready_for_payment' as const;
  // The promotions are looked up while the items are resolved: one round trip fewer on the way to the insert.
  const [{ region, requested, cart, lines: newLines }, stored] = await Promise.all([
    newCart(deps, input, { status, client_id: null }),
    storedPromotionsFor(deps, requestedPromoCodes(input)),
  ]);
  const lines = requested.map(({ variant, quantity }) => ({ variantId: variant.id, title: variant.title, quantity, unitAmount: variant.price_amount! }));
  const { priced, applied, messages } = priceWithPromotions(deps, lines, region, cart.promo_codes, stored);

  const { id } = cart;
  const session = toCheckoutSession(
    { id, status, regionId: region.id, lineIds: newLines.map((line) => line.id), appliedCodes: applied, messages, checkoutUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, id) },
    priced,
  );
  await carts.insertCart(deps.db, cart, newLines, options.alongside?.(session));
  return session;
}

function sessionNotFound(id: string): NotFound {
  return new NotFound(`No checkout session with id ${id}.`, { param: 'id' });
}

/** Lines whose variant is no longer sold in the region are left out and reported, rather than priced at zero. */
function priceableLines(rows: carts.CartLineRow[]): { lines: Array<LineToPrice & { id: string }>; messages: SessionMessage[] } {
  const messages: SessionMessage[] = [];
  const lines = rows.flatMap((row, index) => {
    if (row.price_amount === null) {
      messages.push({ type: 'warning', code: 'item_unavailable', param: `line_items[${index}]`, message: `${row.variant_id} is no longer sold in this region; it was removed from the totals.` });
      return [];
    }
    return [{ id: row.id, variantId: row.variant_id, title: row.title, quantity: row.quantity, unitAmount: row.price_amount }];
  });
  return { lines, messages };
}

/** A stored cart priced now: current prices, current promotion rules. Its lines are read unless already at hand. */
export async function presentCart(deps: Deps, cart: carts.CartRow, cartLines?: carts.CartLineRow[]): Promise<CheckoutSession> {
  const [region, rows, stored] = await Promise.all([
    resolveRegion(deps.db, cart.region_id),
    cartLines ?? carts.listCartLines(deps.db, cart),
    storedPromotionsFor(deps, cart.promo_codes),
  ]);
  const { lines, messages: lineMessages } = priceableLines(rows);
  const { priced, applied, messages } = priceWithPromotions(deps, lines, region, cart.promo_codes, stored);
  return toCheckoutSession(
    {
      id: cart.id,
      status: cart.status as CheckoutSession['status'],
      regionId: region.id,
      lineIds: lines.map((line) => line.id),
      appliedCodes: applied,
      messages: [...lineMessages, ...messages],
      checkoutUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, cart.id),
    },
    priced,
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
  return presentCart(deps, found.cart, found.lines);
}

/** Cancels the session and abandons its cart. Permanent; cancelling again answers the same cancelled session. */
export async function cancelCheckoutSession(deps: Deps, id: string): Promise<CheckoutSession> {
  await carts.cancelSession(deps.db, id, new Date(deps.now()));
  return getCheckoutSession(deps, id); // 404 for an unknown id (or an agent's open cart, which the update left alone)
}

/** Completion never happens through the API: payment is a human hand-off at checkout_url. */
export async function completeCheckoutSession(deps: Deps, id: string): Promise<never> {
  await findSessionCart(deps, id);
  throw new Unprocessable('delegated_payment_not_supported', 'This store does not accept delegated payment: a human must pay at payment_provider.checkout_url.', {
    param: 'payment_provider',
    details: { supported_payment_modes: ['human_handoff'] },
  });
}
