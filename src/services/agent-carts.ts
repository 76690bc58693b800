// Agent carts (scope cart:write): a cart an OAuth client builds line by line, then turns into a checkout session.
// Carts are priced by the checkout service on every answer, so a cart quotes exactly what its session will. A client
// sees only its own carts, and a cart changes only while `open`. Each change runs in one transaction that holds the
// cart's row lock: a failed change leaves nothing behind, and two changes to one cart cannot interleave (two adds of
// the same variant would otherwise both pass the stock check).
import type { Knex } from 'knex';
import type { components } from '../../codegen/types.js';
import type { Db } from '../db/knex.js';
import * as carts from '../db/repositories/carts.js';
import {
  availabilityProblem,
  BODY_ITEM,
  lineError,
  matchVariant,
  pathUnder,
  referencesOf,
  requestedItem,
  type ItemPath,
  type PurchasableVariantRow,
} from '../domain/cart-items.js';
import type { Deps } from '../deps.js';
import { BadRequest, Conflict, NotFound } from '../domain/errors.js';
import { resolveRegion } from './catalog.js';
import { candidateVariants, getCheckoutSession, presentCart, type CheckoutSession } from './checkout.js';
import { createOpenCart } from './checkout/create.js';
import { withTerms } from './checkout/destination.js';

export type AgentCart = components['schemas']['AgentCart'];
type CheckoutItemInput = components['schemas']['CheckoutItemInput'];

type CartChange = (trx: Knex.Transaction, cart: carts.CartRow, lines: carts.StoredLine[]) => Promise<void>;

function cartNotFound(id: string): NotFound {
  return new NotFound(`No cart ${id} belongs to this client.`, { param: 'id', next: { to: 'create_cart' } });
}

function lineNotFound(cartId: string, lineId: string): NotFound {
  return new NotFound(`Cart ${cartId} has no line ${lineId}; its line ids are in line_items[].id.`, {
    param: 'line_id',
  });
}

function cartNotOpen(cart: carts.CartRow): Conflict {
  const what =
    cart.status === 'canceled'
      ? 'became a checkout session that was cancelled'
      : 'became a checkout session and can no longer be changed';
  return new Conflict('cart_not_open', `Cart ${cart.id} ${what}.`, undefined, { next: { to: 'create_new_cart' } });
}

/**
 * A line that was buyable when added but no longer is (stock fell, the region stopped selling it) is not a malformed
 * request but a conflict with the cart as it stands; the agent fixes it with the line's id.
 */
function lineUnavailable(error: unknown, lineId: string): unknown {
  if (!(error instanceof BadRequest)) return error;
  return new Conflict('line_item_unavailable', error.message, undefined, {
    param: error.param,
    details: error.details,
    next: { to: 'change_cart_line', lineId },
  });
}

/** The cart as priced in `session`, exactly as its checkout session would be, without the payment hand-off. */
function cartView(cart: Pick<carts.CartRow, 'status'>, session: CheckoutSession): AgentCart {
  const { id, currency, region_id, line_items, totals, promo_codes, messages } = session;
  const { totals_estimated, tax_included, shipping_address, shipping_option, shipping_options } = session;
  const { shipping_tax, tax_lines } = session;
  const destination = { shipping_address, shipping_option, shipping_options, shipping_tax, tax_lines };
  return {
    id,
    object: 'cart',
    status: cart.status,
    currency,
    region_id,
    line_items,
    totals,
    promo_codes,
    messages,
    totals_estimated,
    tax_included,
    // Only the fields the session has: an absent one stays absent.
    ...Object.fromEntries(Object.entries(destination).filter(([, value]) => value !== undefined)),
  };
}

/** The cart priced now, read with everything it is priced from in one statement. */
async function present(deps: Deps, cart: Pick<carts.CartRow, 'id'>): Promise<AgentCart> {
  const found = await carts.findCartWithLines(deps.db, cart.id);
  if (!found) throw cartNotFound(cart.id);
  return cartView(found.cart, presentCart(deps, await withTerms(deps, found)));
}

async function requireCart(
  db: Db,
  id: string,
  clientId: string,
  options: { forUpdate?: boolean } = {},
): Promise<carts.CartRow> {
  const cart = await carts.findClientCart(db, id, clientId, options);
  if (!cart) throw cartNotFound(id);
  return cart;
}

function requireLine(cart: carts.CartRow, lines: carts.StoredLine[], lineId: string): carts.StoredLine {
  const line = lines.find((candidate) => candidate.id === lineId);
  if (!line) throw lineNotFound(cart.id, lineId);
  return line;
}

/** The variants the items name, in order, with their stock and their price in the cart's region, and its currency. */
async function variantsInCart(
  trx: Knex.Transaction,
  cart: carts.CartRow,
  items: Array<{ item: CheckoutItemInput; at: ItemPath }>,
) {
  const requested = items.map(({ item, at }) => requestedItem(item, at));
  const region = await resolveRegion(trx, cart.region_id);
  const candidates = await candidateVariants(trx, referencesOf(requested), region);
  const variants = requested.map(({ ref }) => {
    const variant = matchVariant(ref, candidates);
    if ('reason' in variant) throw lineError(variant);
    return variant;
  });
  return { variants, currencyCode: region.currency_code };
}

/** A line can be bought as creating a session would: priced in the region, at most 100, in stock. */
function checkAvailable(variant: PurchasableVariantRow, quantity: number, at: ItemPath, currencyCode: string): void {
  const problem = availabilityProblem(
    variant,
    quantity,
    { itemParam: at(), quantityParam: at('quantity') },
    currencyCode,
  );
  if (problem) throw lineError(problem);
}

/** The variant the body of a line-item request names. */
async function variantOfBody(trx: Knex.Transaction, cart: carts.CartRow, item: CheckoutItemInput) {
  const { variants, currencyCode } = await variantsInCart(trx, cart, [{ item, at: BODY_ITEM }]);
  return { variant: variants[0]!, currencyCode };
}

/** Applies a change to one of the client's open carts under its row lock, then answers the cart re-priced. */
async function changeOpenCart(deps: Deps, clientId: string, id: string, change: CartChange): Promise<AgentCart> {
  const cart = await deps.db.transaction(async (trx) => {
    const locked = await requireCart(trx, id, clientId, { forUpdate: true });
    if (locked.status !== 'open') throw cartNotOpen(locked);
    await change(trx, locked, await carts.listLineRows(trx, id));
    await carts.touchCart(trx, id, new Date(deps.now()));
    return locked;
  });
  return present(deps, cart);
}

/** Every line must still be buyable as it stands, by the rules of creating a session: stock may have fallen since. */
async function requirePurchasable(trx: Knex.Transaction, cart: carts.CartRow): Promise<void> {
  const lines = await carts.listLineRows(trx, cart.id);
  if (!lines.length)
    throw new Conflict('cart_empty', `Cart ${cart.id} has no line items.`, undefined, {
      next: { to: 'add_cart_line' },
    });
  const named = lines.map((line, index) => ({
    item: { variant_id: line.variant_id },
    at: pathUnder(`line_items[${index}]`),
  }));
  const { variants, currencyCode } = await variantsInCart(trx, cart, named);
  lines.forEach((line, index) => {
    try {
      checkAvailable(variants[index]!, line.quantity, named[index]!.at, currencyCode);
    } catch (error) {
      throw lineUnavailable(error, line.id);
    }
  });
}

export async function createCart(
  deps: Deps,
  clientId: string,
  input: components['schemas']['CheckoutSessionCreateRequest'],
): Promise<AgentCart> {
  // Created as a checkout session is (one read, or an earlier one, and one insert), priced once: nothing is read back.
  return createOpenCart(deps, clientId, input, (stored) => cartView(stored.cart, presentCart(deps, stored)));
}

export async function getCart(deps: Deps, clientId: string, id: string): Promise<AgentCart> {
  return present(deps, await requireCart(deps.db, id, clientId));
}

/** Adds an item; a variant the cart already holds grows its line, and the stock and the limit of 100 apply to the sum. */
export function addLineItem(deps: Deps, clientId: string, id: string, item: CheckoutItemInput): Promise<AgentCart> {
  return changeOpenCart(deps, clientId, id, async (trx, cart, lines) => {
    const { variant, currencyCode } = await variantOfBody(trx, cart, item);
    const held = lines.find((line) => line.variant_id === variant.id);
    const quantity = (held?.quantity ?? 0) + (item.quantity ?? 1);
    checkAvailable(variant, quantity, BODY_ITEM, currencyCode);
    if (held) return carts.setLineQuantity(trx, held.id, quantity);
    const position = (lines.at(-1)?.position ?? -1) + 1;
    await carts.insertLine(trx, id, { id: deps.ids.next('cali'), variant_id: variant.id, quantity }, position);
  });
}

export function updateLineItem(
  deps: Deps,
  clientId: string,
  id: string,
  lineId: string,
  quantity: number,
): Promise<AgentCart> {
  return changeOpenCart(deps, clientId, id, async (trx, cart, lines) => {
    const line = requireLine(cart, lines, lineId);
    const { variant, currencyCode } = await variantOfBody(trx, cart, { variant_id: line.variant_id });
    checkAvailable(variant, quantity, BODY_ITEM, currencyCode);
    await carts.setLineQuantity(trx, line.id, quantity);
  });
}

/** Removing the last line is allowed: the cart stays open, empty and priced at zero, ready for new lines. */
export function removeLineItem(deps: Deps, clientId: string, id: string, lineId: string): Promise<AgentCart> {
  return changeOpenCart(deps, clientId, id, (trx, cart, lines) =>
    carts.deleteLine(trx, requireLine(cart, lines, lineId).id),
  );
}

/**
 * Turns an open cart into the checkout session with its id. Repeating it (a retry after a lost answer) changes nothing
 * and answers the session as it stands (`created: false`); a cancelled session cannot be reopened.
 */
export async function checkOut(
  deps: Deps,
  clientId: string,
  id: string,
): Promise<{ session: CheckoutSession; created: boolean }> {
  const created = await deps.db.transaction(async (trx) => {
    const cart = await requireCart(trx, id, clientId, { forUpdate: true });
    if (cart.status === 'ready_for_payment' || cart.status === 'completed') return false;
    if (cart.status !== 'open') throw cartNotOpen(cart);
    await requirePurchasable(trx, cart);
    await carts.touchCart(trx, id, new Date(deps.now()), 'ready_for_payment');
    return true;
  });
  return { session: await getCheckoutSession(deps, id), created };
}
