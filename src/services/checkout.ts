// Checkout sessions: create, read (re-priced live), cancel. The REST handlers, the agent API and the MCP checkout
// server all go through these functions, so every surface quotes the same numbers.
import type { components } from '../../codegen/types.js';
import * as carts from '../db/repositories/carts.js';
import type { OrderWithLines } from '../db/repositories/orders.js';
import {
  findNewCartReads,
  findPurchasableVariants,
  type NewCartRead,
  type NewCartReads,
  type PurchasableVariantRow,
  type RegionRow,
} from '../db/repositories/catalog.js';
import type { Db } from '../db/knex.js';
import { resolveLines, wellFormedReferences, type ItemReference, type RequestedLine } from '../domain/cart-items.js';
import {
  checkoutUrlFor,
  toCheckoutSession,
  type CheckoutSession,
  type PaidSession,
  type SessionMessage,
} from '../domain/checkout-session.js';
import { newId } from '../domain/ids.js';
import type { Quote } from '../domain/orders.js';
import { priceCart, type LineToPrice, type PricedCart } from '../domain/pricing.js';
import {
  applyPromoCodes,
  canonicalCodes,
  type AppliedPromotion,
  type PromoMessage,
  type Promotion,
} from '../domain/promotions.js';
import type { Deps } from '../deps.js';
import { BadRequest, Conflict, NotFound, Unprocessable } from '../domain/errors.js';
import { requireRegion } from './catalog.js';
import { earlierReadsCache } from './earlier-reads.js';
import { expireProcessorCheckouts } from './payments/expiry.js';
import { checkoutKeys, claimWithWrite, type IdempotentRequest, type KeyRefusal } from './idempotency/index.js';

export type { CheckoutSession };

const PROMO_ALIASES = [
  'promo_codes',
  'promo_code',
  'discount_code',
  'discount_codes',
  'coupon_code',
  'coupon_codes',
] as const;

type CreateRequest = components['schemas']['CheckoutSessionCreateRequest'];

/** Every requested code, from `promo_codes` and its aliases, in that order. */
export function requestedPromoCodes(input: CreateRequest): string[] {
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

export interface NewCart {
  region: RegionRow;
  /** The variants the lines were resolved to, in line order. */
  requested: RequestedLine[];
  cart: Omit<carts.CartRow, 'canceled_at' | 'completed_at'>;
  lines: carts.NewLine[];
}

/** A new cart, not yet stored, from a create request and the variants its items could name, priced in `region`. */
function cartFrom(
  deps: Deps,
  input: CreateRequest,
  owner: Pick<carts.CartRow, 'status' | 'client_id'>,
  region: RegionRow,
  candidates: PurchasableVariantRow[],
): NewCart {
  const requested = resolveLines(input.items, candidates, region.currency_code);
  const now = new Date(deps.now());
  const cart = {
    id: newId('cart'),
    region_id: region.id,
    ...owner,
    buyer_email: input.buyer?.email ?? null,
    promo_codes: requestedPromoCodes(input),
    created_at: now,
    updated_at: now,
  };
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

const PUBLIC_SESSION = { status: 'ready_for_payment', client_id: null } as const;

/** What a create reads: the region, the candidate variants and the promotions; under an Idempotency-Key, its record. */
function newCartRead(input: CreateRequest, key?: { scope: string; key: string }): NewCartRead {
  return {
    regionId: input.region_id,
    refs: refsByKind(wellFormedReferences(input.items)),
    codes: canonicalCodes(requestedPromoCodes(input)),
    key,
  };
}

/** The create's one read, in one statement: the create is this and the insert. */
function readNewCart(deps: Deps, input: CreateRequest, key?: { scope: string; key: string }): Promise<NewCartReads> {
  return findNewCartReads(deps.db, newCartRead(input, key));
}

/** A new cart priced from the create's read and ready to store: its cart, its lines, and the session as shown. */
function sessionFrom(
  deps: Deps,
  input: CreateRequest,
  owner: Pick<carts.CartRow, 'status' | 'client_id'>,
  reads: NewCartReads,
) {
  const {
    region,
    requested,
    cart,
    lines: newLines,
  } = cartFrom(deps, input, owner, requireRegion(reads.region, input.region_id, 'region_id'), reads.variants);
  const stored = reads.promotions;
  const lines = requested.map(({ variant, quantity }) => ({
    variantId: variant.id,
    title: variant.title,
    quantity,
    unitAmount: variant.price_amount!,
  }));
  const { priced, applied, messages } = priceWithPromotions(deps, lines, region, cart.promo_codes, stored);

  const { id } = cart;
  const session = toCheckoutSession(
    {
      id,
      status: owner.status as CheckoutSession['status'],
      regionId: region.id,
      lineIds: newLines.map((line) => line.id),
      appliedCodes: applied,
      messages,
      checkoutUrl: checkoutUrlFor(deps.config.checkoutUrlTemplate, id),
    },
    priced,
  );
  return { cart, lines: newLines, session };
}

/**
 * A new cart priced and ready to store: its cart, its lines, and the session as the API shows it. `owner` makes it a
 * public checkout session, or an agent client's open cart (whose view shows the same figures).
 */
export async function prepareSession(
  deps: Deps,
  input: CreateRequest,
  owner: Pick<carts.CartRow, 'status' | 'client_id'> = PUBLIC_SESSION,
) {
  return sessionFrom(deps, input, owner, await readNewCart(deps, input));
}

/**
 * Stores a new cart (see carts.insertCart); under a key, not when another request's answer took the key first.
 * A variant deleted between the create's read and this insert is answered as the same request sent now would be, an
 * unknown item, rather than as an internal error.
 */
export async function storeNewCart(
  deps: Deps,
  cart: NewCart['cart'],
  lines: carts.NewLine[],
  stored?: carts.StoredUnder,
): Promise<carts.CartStored> {
  try {
    return await carts.insertCart(deps.db, cart, lines, stored);
  } catch (error) {
    if (!carts.isMissingVariant(error)) throw error;
    throw new BadRequest('unknown_item', 'An item left the catalog while the session was being created.', {
      param: 'items',
      resolution: 'List products with GET /api/store/products.',
    });
  }
}

/**
 * The last read of each set of references a create named, per database (see earlier-reads.ts), without its key's
 * record: a create like an earlier one, with a key or without, is priced from its read, and one that fails so priced
 * is read afresh, so an answer and a stored cart are always what a fresh read gives.
 */
const earlierReadsOf = earlierReadsCache<NewCartReads>();

/** The new cart priced from an earlier read, or undefined when the request fails so priced (a fresh read judges it). */
function pricedFromEarlierRead(deps: Deps, input: CreateRequest, reads: NewCartReads) {
  try {
    return sessionFrom(deps, input, PUBLIC_SESSION, reads);
  } catch {
    return undefined;
  }
}

export async function createCheckoutSession(deps: Deps, input: CreateRequest): Promise<CheckoutSession> {
  const read = newCartRead(input);
  const readKey = JSON.stringify(read);
  const earlier = earlierReadsOf(deps.db).get(readKey);
  const fromEarlier = earlier && pricedFromEarlierRead(deps, input, earlier);
  if (
    fromEarlier &&
    (await storeNewCart(deps, fromEarlier.cart, fromEarlier.lines, { pricedAt: earlier.catalogVersion })).stored
  )
    return fromEarlier.session;
  const reads = await findNewCartReads(deps.db, read);
  const { cart, lines, session } = sessionFrom(deps, input, PUBLIC_SESSION, reads);
  await storeNewCart(deps, cart, lines);
  earlierReadsOf(deps.db).set(readKey, reads);
  return session;
}

/** Answered 201, first and on every replay. */
export interface IdempotentCreation {
  kind: 'created';
  session: CheckoutSession;
  /** The API version the answer was first given under (a replay keeps it). */
  apiVersion: string;
  replayed: boolean;
}

/**
 * Creates a session exactly once per Idempotency-Key (claimWithWrite under the checkout keys' policy): the create's
 * read brings the key's record, and a replay answers the stored session and API version. Otherwise the insert stores
 * the session and claims the key with its answer in one statement, so a failure stores nothing (never replayed). A
 * create like an earlier one is priced from that one's read and sends only the insert, which claims the key only if
 * the catalogue has not changed since. A key holding another request's answer (or an earlier release's request in
 * flight) is the refusal the surface renders.
 */
export async function createCheckoutSessionIdempotently(
  deps: Deps,
  input: CreateRequest,
  key: string,
  apiVersion: string,
): Promise<IdempotentCreation | KeyRefusal> {
  const request: IdempotentRequest = { scope: checkoutKeys.scope, key, body: input };
  const readKey = JSON.stringify(newCartRead(input));
  const outcome = await claimWithWrite(deps, checkoutKeys, request, {
    earlier: earlierReadsOf(deps.db).get(readKey),
    async read(keyToRead) {
      const reads = await readNewCart(deps, input, keyToRead);
      return { reads, record: reads.keyRecord };
    },
    answer(reads, earlier) {
      const built = earlier
        ? pricedFromEarlierRead(deps, input, reads)
        : sessionFrom(deps, input, PUBLIC_SESSION, reads);
      if (!built) return undefined;
      return {
        answer: { body: built.session, apiVersion },
        async store(answer) {
          const pricedAt = earlier ? reads.catalogVersion : undefined;
          const stored = await storeNewCart(deps, built.cart, built.lines, { answer, pricedAt });
          // As for a create without a key, the read serves later creates once this one is settled.
          if (!earlier) earlierReadsOf(deps.db).set(readKey, { ...reads, keyRecord: undefined });
          return stored;
        },
      };
    },
  });
  switch (outcome.kind) {
    case 'ran':
    case 'replayed':
      return {
        kind: 'created',
        session: outcome.answer.body as CheckoutSession,
        apiVersion: outcome.answer.apiVersion,
        replayed: outcome.kind === 'replayed',
      };
    default:
      return outcome;
  }
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
