// Checkout sessions as the ACP and UCP bindings use them: one session store (a session is a legacy checkout session,
// a cart in `ready_for_payment`, `canceled` or `completed`), read, created and changed here, priced by the checkout
// module. Every function takes the `db` to work in: the bindings run each change in one transaction with the write
// that records its answer under the request's idempotency key; a create is one read and one write (createProtocolSession).
import { isStorableText } from '../domain/text.js';
import {
  listRegionsWithCountries,
  findPurchasableVariants,
  type PurchasableVariantRow,
  type RegionRow,
} from '../db/repositories/catalog.js';
import * as carts from '../db/repositories/carts.js';
import type { ProtocolAnswer, ProtocolCreateStored, StoredAnswer } from '../db/repositories/protocol-idempotency.js';
import {
  readProtocolCreate,
  storeProtocolCreate,
  type ProtocolCreateReads,
} from '../db/repositories/protocol-sessions.js';
import type { Db } from '../db/knex.js';
import { MAX_QUANTITY } from '../domain/cart-items.js';
import { checkoutUrlFor } from '../domain/checkout-session.js';
import { newId } from '../domain/ids.js';
import { canonicalCodes } from '../domain/promotions.js';
import { toProtocolSession, type BuyerDetails, type ProtocolSession } from '../domain/protocol-session.js';
import type { Deps } from '../deps.js';
import { requireRegion } from './catalog.js';
import { earlierReadsCache } from './earlier-reads.js';
import { expireProcessorCheckoutsAfterCommit } from './payments/expiry.js';
import { orderAsPricedCart, orderPermalink, priceStoredCart } from './checkout.js';
import type { ProtocolResponse } from '../protocols/answers.js';
import {
  claimWithEarlierWrite,
  claimWithWrite,
  protocolKeys,
  type IdempotentRequest,
  type KeyOutcome,
  type WriteAnswer,
} from './idempotency/index.js';

/** A create's answer (rendered by its binding), and how to store it with what it created. */
type CreateAnswer = WriteAnswer<ProtocolResponse, StoredAnswer, ProtocolAnswer>;

/** One requested line, with where its fields are in the request (for problems). */
export interface RequestedProtocolLine {
  itemId: string;
  quantity: number;
  /** A line id the request names (UCP update): kept when it is one of the session's lines. */
  lineId?: string;
  idPath: string;
  quantityPath: string;
}

export type LineProblemCode = 'not_found' | 'item_unavailable' | 'out_of_stock' | 'quantity_exceeded';

export interface LineProblem {
  code: LineProblemCode;
  path: string;
  content: string;
}

/** What resolving a line needs of its variant. */
type LineVariant = Pick<
  PurchasableVariantRow,
  'id' | 'price_amount' | 'manage_inventory' | 'allow_backorder' | 'inventory_quantity'
>;

interface ResolvedLine<Variant extends LineVariant = PurchasableVariantRow> {
  variant: Variant;
  quantity: number;
  lineId?: string;
  first: RequestedProtocolLine;
}

/** The variants a request can name: only `variant_…` ids name items. */
function requestedVariantIds(requested: RequestedProtocolLine[]): string[] {
  return [...new Set(requested.map((line) => line.itemId).filter((id) => id.startsWith('variant_')))];
}

/**
 * Resolves requested lines to variants, merging repeats of one variant (quantities summed, the first line id kept),
 * and collects every problem, one per failing line, rather than stopping at the first. Only `variant_…` ids name items.
 */
export async function resolveProtocolLines(
  db: Db,
  requested: RequestedProtocolLine[],
  region: RegionRow,
): Promise<{ lines: ResolvedLine[]; problems: LineProblem[] }> {
  const variantIds = requestedVariantIds(requested);
  const candidates = variantIds.length
    ? await findPurchasableVariants(db, { variantIds, skus: [], productHandles: [] }, region.id)
    : [];
  return resolveAgainst(requested, candidates, region);
}

/** resolveProtocolLines over the candidates read (the variants among the requested ids, priced in the region). */
function resolveAgainst<Variant extends LineVariant>(
  requested: RequestedProtocolLine[],
  candidates: Variant[],
  region: RegionRow,
): { lines: Array<ResolvedLine<Variant>>; problems: LineProblem[] } {
  const byId = new Map(candidates.map((variant) => [variant.id, variant]));
  const problems: LineProblem[] = [];
  const merged = new Map<string, ResolvedLine<Variant>>();
  for (const line of requested) {
    const variant = byId.get(line.itemId);
    if (!variant) {
      problems.push({
        code: 'not_found',
        path: line.idPath,
        content: `No purchasable item '${line.itemId}' in this store; items are named by variant id (variant_…).`,
      });
      continue;
    }
    const existing = merged.get(variant.id);
    if (existing) existing.quantity += line.quantity;
    else merged.set(variant.id, { variant, quantity: line.quantity, lineId: line.lineId, first: line });
  }
  const currency = region.currency_code.toUpperCase();
  for (const { variant, quantity, first } of merged.values()) {
    if (variant.price_amount === null) {
      problems.push({
        code: 'item_unavailable',
        path: first.idPath,
        content: `${variant.id} is not sold in ${currency}.`,
      });
    } else if (quantity > MAX_QUANTITY) {
      problems.push({
        code: 'quantity_exceeded',
        path: first.quantityPath,
        content: `${variant.id} is requested ${quantity} times in all; the most per line is ${MAX_QUANTITY}.`,
      });
    } else if (variant.manage_inventory && !variant.allow_backorder && quantity > variant.inventory_quantity) {
      problems.push({
        code: 'out_of_stock',
        path: first.quantityPath,
        content: `Only ${variant.inventory_quantity} of ${variant.id} are available; requested ${quantity}.`,
      });
    }
  }
  return { lines: [...merged.values()], problems };
}

export async function supportedCurrencies(db: Db): Promise<string[]> {
  const { regions } = await listRegionsWithCountries(db);
  return regions.map((region) => region.currency_code);
}

function buyerColumns(buyer: BuyerDetails | null): Pick<carts.CartRow, 'buyer_email' | 'buyer_details'> {
  if (!buyer) return { buyer_email: null, buyer_details: null };
  const { email, ...details } = buyer;
  return {
    buyer_email: email ?? null,
    buyer_details: Object.keys(details).length ? (details as Record<string, string>) : null,
  };
}

function buyerOf(cart: carts.CartRow): BuyerDetails | null {
  const details = cart.buyer_details ?? {};
  const buyer = { ...(cart.buyer_email ? { email: cart.buyer_email } : {}), ...details };
  return Object.keys(buyer).length ? buyer : null;
}

/** A stored session in the protocols' terms, priced now, or once paid as its order was charged; undefined for an unknown id or an agent's open cart. */
export async function loadProtocolSession(deps: Deps, db: Db, id: string): Promise<ProtocolSession | undefined> {
  if (!isStorableText(id)) return undefined; // no session has such an id, and it must not reach a query
  const found = await carts.findCartWithLines(db, id);
  if (!found || found.cart.status === 'open') return undefined;
  return protocolSessionOf(deps, found);
}

/** A session as read (or as just stored) in the protocols' terms. */
function protocolSessionOf(deps: Deps, found: carts.StoredSession): ProtocolSession {
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
      buyer: buyerOf(cart),
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

/** UCP names the buyer's country (none, or one no region serves: the default region); ACP a currency. */
export type ProtocolMarket = { country: string | undefined } | { currency: string };

export interface NewProtocolSession<Market extends ProtocolMarket = ProtocolMarket> {
  market: Market;
  lines: RequestedProtocolLine[];
  codes: string[];
  buyer: BuyerDetails | null;
  fulfillmentDetails?: unknown;
}

export type CreateOutcome<Market extends ProtocolMarket = ProtocolMarket> =
  | { kind: 'created'; session: ProtocolSession; countryServed: boolean }
  /** A line cannot be bought: nothing is stored, and every failing line is reported. */
  | { kind: 'rejected'; problems: LineProblem[] }
  /** No region sells in the requested currency. */
  | (Market extends { currency: string } ? { kind: 'unsupported_currency'; currencies: string[] } : never);

/** A create as a binding asks for it: the session to create, and its answer to each outcome. */
export interface CreatePlan<Market extends ProtocolMarket = ProtocolMarket> {
  input: NewProtocolSession<Market>;
  respond(outcome: CreateOutcome<Market>): ProtocolResponse;
}

/**
 * A create request as a binding understood it: the plan (its protocol errors rendered as answers), or the answer it
 * was refused with before anything was read (an invalid body).
 */
export type ProtocolCreate = CreatePlan | { input?: undefined; refused: ProtocolResponse };

/**
 * jsonb keeps an object's keys ordered shorter first, then bytewise, whatever order they were sent in: a session built
 * from what was just stored shows its jsonb columns as a read of them would.
 */
function asJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asJsonb);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([key, member]) => [key, Buffer.from(key), asJsonb(member)] as const);
  entries.sort(([, a], [, b]) => a.length - b.length || Buffer.compare(a, b));
  return Object.fromEntries(entries.map(([key, , member]) => [key, member]));
}

/** The cart a create stores, its lines, and the session as a read of them shows it. */
function newSession(deps: Deps, input: NewProtocolSession, region: RegionRow, reads: ProtocolCreateReads) {
  const { lines, problems } = resolveAgainst(input.lines, reads.variants, region);
  if (problems.length) return { problems };
  const now = new Date(deps.now());
  const { buyer_email, buyer_details } = buyerColumns(input.buyer);
  const cart = {
    id: newId('cart'),
    region_id: region.id,
    status: 'ready_for_payment' as const,
    client_id: null,
    promo_codes: input.codes,
    buyer_email,
    buyer_details: asJsonb(buyer_details) as Record<string, string> | null,
    fulfillment_details: asJsonb(input.fulfillmentDetails ?? null),
    created_at: now,
    updated_at: now,
  };
  const rows = lines.map(({ variant, quantity }) => ({
    id: newId('cali'),
    variant_id: variant.id,
    quantity,
    title: variant.title,
    product_title: variant.product_title,
    price_amount: variant.price_amount,
    product_id: variant.product_id,
    sku: variant.sku,
    thumbnail: variant.thumbnail,
  }));
  const session = protocolSessionOf(deps, {
    cart: { ...cart, canceled_at: null, completed_at: null },
    lines: rows,
    region,
    promotions: reads.promotions,
    order: undefined,
  });
  return { cart, lines: rows.map(({ id, variant_id, quantity }) => ({ id, variant_id, quantity })), session };
}

/** What a create is stored under, beyond its key's answer: see AnswerToStore. */
interface StoredUnder {
  pricedAt: string | undefined;
  grant?: string | undefined;
}

/**
 * Stores a create's answer with what it created (if anything), in one statement: under a key through the protocol
 * creates' group commit, without one the cart alone through the carts' (an answer nobody can replay is not stored).
 * Priced from an earlier read (`pricedAt`: its catalogue version), only if the catalogue is still at that version;
 * under an access token read earlier (`grant`: its hash, with a key only), only if the token is still active.
 */
async function storeCreate(
  db: Db,
  created: { cart: carts.NewCartRow; lines: carts.NewLine[] } | undefined,
  answer: ProtocolAnswer | undefined,
  { pricedAt, grant }: StoredUnder,
): Promise<ProtocolCreateStored> {
  try {
    if (answer) return await storeProtocolCreate(db, { answer, created, pricedAt, grant });
    const stored = created ? (await carts.insertCart(db, created.cart, created.lines, { pricedAt })).stored : true;
    return stored ? { stored: true } : { stored: false, keyRecord: undefined };
  } catch (error) {
    // A variant deleted since the read: read again, and the line is answered as not found.
    if (carts.isMissingVariant(error)) return { stored: false, keyRecord: undefined };
    throw error;
  }
}

/**
 * The answer to a create from what was read; from an earlier read (`earlier`), only a session created (anything else
 * is judged by a fresh read), stored only if the catalogue is still at that read's version (and under `grant`, only
 * if that token is still active).
 */
function answerCreate(
  deps: Deps,
  create: ProtocolCreate,
  reads: ProtocolCreateReads,
  earlier: boolean,
  grant?: string,
): CreateAnswer | undefined {
  const { db } = deps;
  const answerOnly = (response: ProtocolResponse) =>
    earlier
      ? undefined
      : {
          answer: response,
          store: (answer: ProtocolAnswer | undefined) => storeCreate(db, undefined, answer, { pricedAt: undefined }),
        };
  if (!create.input) return answerOnly(create.refused);
  const { input, respond } = create;
  const region = 'currency' in input.market ? reads.region : requireRegion(reads.region, undefined);
  if (!region) return answerOnly(respond({ kind: 'unsupported_currency', currencies: reads.currencies }));
  const built = newSession(deps, input, region, reads);
  if (built.problems) return answerOnly(respond({ kind: 'rejected', problems: built.problems }));
  const { cart, lines, session } = built;
  const pricedAt = earlier ? reads.catalogVersion : undefined;
  return {
    answer: respond({ kind: 'created', session, countryServed: reads.countryServed }),
    store: (answer) => storeCreate(db, { cart, lines }, answer, { pricedAt, grant }),
  };
}

const NOTHING_TO_READ = { country: null, currency: null, variantIds: [], codes: [] };

/** The last read of each kind of protocol create, per database (see earlier-reads.ts), without its key's record. */
const earlierReadsOf = earlierReadsCache<ProtocolCreateReads>();

/** What a create reads (but its key's record), and that read's place among the earlier reads. */
function createRead(create: ProtocolCreate) {
  const { input } = create;
  const query = input
    ? {
        country: 'country' in input.market ? input.market.country?.toLowerCase() || null : null,
        currency: 'currency' in input.market ? input.market.currency.toLowerCase() : null,
        variantIds: requestedVariantIds(input.lines),
        codes: canonicalCodes(input.codes),
      }
    : NOTHING_TO_READ;
  return { query, readKey: JSON.stringify(query) };
}

/**
 * Creates a session exactly once per key (claimWithWrite): one statement reads what the create needs with the
 * key's record, the session is built and priced from it, and one statement stores the cart, its lines and the answer
 * (or the answer alone, when nothing could be created). A create like an earlier one is priced from that one's read
 * and sends only the store. Without a key the cart goes through the group commit.
 */
export function createProtocolSession(
  deps: Deps,
  call: IdempotentRequest | undefined,
  create: ProtocolCreate,
): Promise<KeyOutcome<ProtocolResponse>> {
  const { query, readKey } = createRead(create);
  return claimWithWrite(deps, protocolKeys, call, {
    earlier: earlierReadsOf(deps.db).get(readKey),
    async read(key) {
      const reads = await readProtocolCreate(deps.db, { ...query, key });
      earlierReadsOf(deps.db).set(readKey, { ...reads, record: undefined });
      return { reads, record: reads.record };
    },
    answer: (reads, earlier) => answerCreate(deps, create, reads, earlier),
  });
}

/**
 * A create by a client whose access token was read earlier (`grant`: the token's hash), not read again: priced from an
 * earlier create's read and stored in one statement that also confirms the token is still active. The answer once
 * stored; undefined when it was not (nothing stored): the token must then be read before anything is answered.
 */
export function createProtocolSessionUnderGrant(
  deps: Deps,
  call: IdempotentRequest,
  create: ProtocolCreate,
  grant: string,
): Promise<ProtocolResponse | undefined> {
  const earlier = earlierReadsOf(deps.db).get(createRead(create).readKey);
  if (!earlier) return Promise.resolve(undefined);
  return claimWithEarlierWrite(deps, protocolKeys, call, earlier, (reads) =>
    answerCreate(deps, create, reads, true, grant),
  );
}

/** What an update changes; an absent field is left as it is. */
export interface ProtocolSessionChange {
  lines?: RequestedProtocolLine[];
  codes?: string[];
  buyer?: BuyerDetails | null;
  fulfillmentDetails?: unknown;
}

export type ChangeOutcome =
  | { kind: 'changed'; session: ProtocolSession }
  /** A line cannot be bought: the session is unchanged; the problems are reported with it. */
  | { kind: 'rejected'; session: ProtocolSession; problems: LineProblem[] }
  | { kind: 'not_found' }
  | { kind: 'not_modifiable'; session: ProtocolSession };

/** Locks the session for this transaction; what state it is in decides whether it may change. */
async function lockSession(
  deps: Deps,
  db: Db,
  id: string,
): Promise<{ cart: carts.CartRow; session: ProtocolSession } | undefined> {
  if (!isStorableText(id)) return undefined;
  const cart = await carts.findCartForUpdate(db, id);
  if (!cart || cart.status === 'open') return undefined;
  return { cart, session: (await loadProtocolSession(deps, db, id))! };
}

export async function changeProtocolSession(
  deps: Deps,
  db: Db,
  id: string,
  change: ProtocolSessionChange,
): Promise<ChangeOutcome> {
  const locked = await lockSession(deps, db, id);
  if (!locked) return { kind: 'not_found' };
  const { cart, session } = locked;
  if (cart.status !== 'ready_for_payment') return { kind: 'not_modifiable', session };
  if (change.lines) {
    const region = (await listRegionsWithCountries(db)).regions.find((row) => row.id === cart.region_id)!;
    const { lines, problems } = await resolveProtocolLines(db, change.lines, region);
    if (problems.length) return { kind: 'rejected', session, problems };
    // A line keeps its id when the request names it, or when its variant stays in the session.
    const current = await carts.listLineRows(db, id);
    const currentIds = new Set(current.map((line) => line.id));
    const idOfVariant = new Map(current.map((line) => [line.variant_id, line.id]));
    const used = new Set<string>();
    const next = lines.map((line) => {
      const kept = [
        line.lineId && currentIds.has(line.lineId) ? line.lineId : undefined,
        idOfVariant.get(line.variant.id),
      ].find((candidate) => candidate && !used.has(candidate));
      const lineId = kept ?? newId('cali');
      used.add(lineId);
      return { id: lineId, variant_id: line.variant.id, quantity: line.quantity };
    });
    await carts.replaceLines(db, id, next);
  }
  await carts.updateCart(db, id, {
    updated_at: new Date(deps.now()),
    ...(change.codes === undefined ? {} : { promo_codes: change.codes }),
    ...(change.buyer === undefined ? {} : buyerColumns(change.buyer)),
    ...(change.fulfillmentDetails === undefined ? {} : { fulfillment_details: change.fulfillmentDetails }),
  });
  return { kind: 'changed', session: (await loadProtocolSession(deps, db, id))! };
}

export type CancelOutcome =
  | { kind: 'canceled'; session: ProtocolSession }
  | { kind: 'not_found' }
  | { kind: 'not_modifiable'; session: ProtocolSession };

export async function cancelProtocolSession(deps: Deps, db: Db, id: string): Promise<CancelOutcome> {
  const locked = await lockSession(deps, db, id);
  if (!locked) return { kind: 'not_found' };
  if (locked.cart.status !== 'ready_for_payment') return { kind: 'not_modifiable', session: locked.session };
  const now = new Date(deps.now());
  await carts.updateCart(db, id, { status: 'canceled', canceled_at: now, updated_at: now });
  // A payment that arrives even so is refused and refunded (PAID_ORDERS).
  expireProcessorCheckoutsAfterCommit(deps, db, id);
  return { kind: 'canceled', session: (await loadProtocolSession(deps, db, id))! };
}
