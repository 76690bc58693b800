// Checkout sessions as the ACP and UCP bindings use them: one session store (a session is a legacy checkout session,
// a cart in `ready_for_payment`, `canceled` or `completed`), read and changed here, created by the one create use case
// (src/services/checkout/create.ts), priced and presented by the checkout module. Every function takes the `db` to work
// in: the bindings run each change in one transaction with the write that records its answer under the request's
// idempotency key.
import { isStorableText } from '../domain/text.js';
import { listRegionsWithCountries, findPurchasableVariants, type RegionRow } from '../db/repositories/catalog.js';
import * as carts from '../db/repositories/carts.js';
import type { Db } from '../db/knex.js';
import {
  resolveLines,
  variantReferences,
  type LineProblem as DomainLineProblem,
  type LineProblemReason,
  type RequestedItem,
} from '../domain/cart-items.js';
import type { BuyerDetails, ProtocolSession } from '../domain/protocol-session.js';
import type { Deps } from '../deps.js';
import { acpDestinationInput } from '../domain/acp-checkout.js';
import { expireProcessorCheckoutsAfterCommit } from './payments/expiry.js';
import { presentProtocolSession } from './checkout.js';
import { checkedProtocolDestination, termsFor, withTerms } from './checkout/destination.js';
import type { DestinationInput, DestinationProblem } from '../domain/destination.js';
import type { FulfilmentTerms, ShippingCode } from '../domain/fulfilment.js';
import type { IdSource } from '../domain/ids.js';

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

/** The protocols' names for the line problems they can meet (they name items by variant id only). */
const PROBLEM_CODES: Partial<Record<LineProblemReason, LineProblemCode>> = {
  unknown_item: 'not_found',
  item_unavailable_in_region: 'item_unavailable',
  insufficient_stock: 'out_of_stock',
  quantity_too_large: 'quantity_exceeded',
};

/** Requested lines in the line resolver's terms: only `variant_…` ids name items. */
export function protocolItems(requested: RequestedProtocolLine[]): RequestedItem[] {
  return requested.map((line) => ({
    ref: { kind: 'item_id', value: line.itemId, param: line.idPath },
    quantity: line.quantity,
    lineId: line.lineId,
    itemParam: line.idPath,
    quantityParam: line.quantityPath,
  }));
}

/** The resolver's problems in the protocols' terms. */
export function protocolProblems(problems: DomainLineProblem[]): LineProblem[] {
  return problems.map((problem) => ({
    code: PROBLEM_CODES[problem.reason]!,
    path: problem.param,
    content: problem.message,
  }));
}

/**
 * Resolves requested lines to variants (resolveLines: repeats of one variant merged, quantities summed, the first line
 * id kept), and collects every problem, one per failing line, rather than stopping at the first.
 */
export async function resolveProtocolLines(db: Db, requested: RequestedProtocolLine[], region: RegionRow) {
  const items = protocolItems(requested);
  const refs = variantReferences(items.flatMap(({ ref }) => ('kind' in ref ? [ref] : [])));
  const candidates = refs.variantIds.length ? await findPurchasableVariants(db, refs, region.id) : [];
  const { lines, problems } = resolveLines(items, candidates, region.currency_code);
  return { lines, problems: protocolProblems(problems) };
}

export async function supportedCurrencies(db: Db): Promise<string[]> {
  const { regions } = await listRegionsWithCountries(db);
  return regions.map((region) => region.currency_code);
}

/** A stored session in the protocols' terms, priced now, or once paid as its order was charged; undefined for an unknown id or an agent's open cart. */
export async function loadProtocolSession(deps: Deps, db: Db, id: string): Promise<ProtocolSession | undefined> {
  if (!isStorableText(id)) return undefined; // no session has such an id, and it must not reach a query
  const found = await carts.findCartWithLines(db, id);
  if (!found || found.cart.status === 'open') return undefined;
  return presentProtocolSession(
    deps,
    await withTerms(deps, found, db),
    await storedAddressProblems(deps, db, found.cart),
  );
}

/**
 * What is wrong with the address an open session's fulfillment details name (ACP's), when it was not one the store
 * ships to: a create keeps the details as sent and prices without them, and the session stays not ready for payment
 * until an update sends an address it ships to.
 */
async function storedAddressProblems(deps: Deps, db: Db, cart: carts.CartRow): Promise<DestinationProblem[]> {
  if (cart.status !== 'ready_for_payment' || cart.shipping_address) return [];
  const address = acpDestinationInput(cart.fulfillment_details);
  if (!address) return [];
  const check = await checkedProtocolDestination(deps, db, cart.region_id, address);
  return check.ok ? [] : check.problems;
}

/** What an update changes; an absent field is left as it is. */
export interface ProtocolSessionChange {
  lines?: RequestedProtocolLine[];
  codes?: string[];
  buyer?: BuyerDetails | null;
  fulfillmentDetails?: unknown;
  /**
   * The destination: `address` checked against the session's region (null removes it), `option` the shipping option
   * chosen (null: none chosen, the first offered is used); an absent field is left as it is. With `offeredOnly` (ACP)
   * the option must be one the destination offers (without one, only `standard`), else the outcome is option_rejected.
   */
  shipping?: { address?: DestinationInput | null; option?: ShippingCode | null; offeredOnly?: boolean };
}

export type ChangeOutcome =
  | { kind: 'changed'; session: ProtocolSession }
  /** A line cannot be bought: the session is unchanged; the problems are reported with it. */
  | { kind: 'rejected'; session: ProtocolSession; problems: LineProblem[] }
  /** The address is not one the store ships to: the session is unchanged; every problem names its field. */
  | { kind: 'invalid_destination'; session: ProtocolSession; problems: DestinationProblem[] }
  /** The option is not one the destination offers (`offeredOnly`): the session is unchanged. */
  | { kind: 'option_rejected'; session: ProtocolSession; offered: string[] }
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

type ResolvedLines = Awaited<ReturnType<typeof resolveProtocolLines>>['lines'];

/** Replaces a cart's lines with resolved ones: a line keeps its id when the request names it, or its variant stays. */
export async function replaceResolvedLines(db: Db, ids: IdSource, id: string, lines: ResolvedLines): Promise<void> {
  const current = await carts.listLineRows(db, id);
  const currentIds = new Set(current.map((line) => line.id));
  const idOfVariant = new Map(current.map((line) => [line.variant_id, line.id]));
  const used = new Set<string>();
  const next = lines.map((line) => {
    const kept = [
      line.lineId && currentIds.has(line.lineId) ? line.lineId : undefined,
      idOfVariant.get(line.variant.id),
    ].find((candidate) => candidate && !used.has(candidate));
    const lineId = kept ?? ids.next('cali');
    used.add(lineId);
    return { id: lineId, variant_id: line.variant.id, quantity: line.quantity };
  });
  await carts.replaceLines(db, id, next);
}

/**
 * Replaces a cart's lines by the requested ones (full replacement), resolved in the cart's region. Nothing changes when
 * a line cannot be bought: its problems are answered.
 */
export async function replaceLines(
  db: Db,
  ids: IdSource,
  cart: Pick<carts.CartRow, 'id' | 'region_id'>,
  requested: RequestedProtocolLine[],
): Promise<LineProblem[]> {
  const region = (await listRegionsWithCountries(db)).regions.find((row) => row.id === cart.region_id)!;
  const { lines, problems } = await resolveProtocolLines(db, requested, region);
  if (problems.length) return problems;
  await replaceResolvedLines(db, ids, cart.id, lines);
  return [];
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
  // Everything is checked before anything is written: a problem leaves the session exactly as it was.
  let resolved: ResolvedLines | undefined;
  if (change.lines) {
    const region = (await listRegionsWithCountries(db)).regions.find((row) => row.id === cart.region_id)!;
    const { lines, problems } = await resolveProtocolLines(db, change.lines, region);
    if (problems.length) return { kind: 'rejected', session, problems };
    resolved = lines;
  }
  const { address, option } = change.shipping ?? {};
  let shippingAddress: carts.CartRow['shipping_address'] | undefined = address === null ? null : undefined;
  let terms: FulfilmentTerms | undefined;
  if (address) {
    const checked = await checkedProtocolDestination(deps, db, cart.region_id, address);
    if (!checked.ok) return { kind: 'invalid_destination', session, problems: checked.problems };
    shippingAddress = checked.destination;
    terms = checked.terms;
  }
  if (change.shipping?.offeredOnly && option) {
    if (address === undefined) terms = await termsFor(deps, cart.region_id, cart.shipping_address, db);
    const offered: string[] = terms ? terms.shippingOptions.map((offer) => offer.code) : ['standard'];
    if (!offered.includes(option)) return { kind: 'option_rejected', session, offered };
  }
  if (resolved) {
    await replaceResolvedLines(db, deps.ids, id, resolved);
  }
  await carts.updateCart(db, id, {
    updated_at: new Date(deps.now()),
    ...(change.codes === undefined ? {} : { promo_codes: change.codes }),
    ...(change.buyer === undefined ? {} : carts.buyerColumns(change.buyer)),
    ...(change.fulfillmentDetails === undefined ? {} : { fulfillment_details: change.fulfillmentDetails }),
    ...(shippingAddress === undefined ? {} : { shipping_address: shippingAddress }),
    ...(option === undefined ? {} : { shipping_option: option }),
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
