// UCP carts (dev.ucp.shopping.cart): the agent carts' model (an `open` cart and its lines, priced by the checkout
// module on every answer, so a cart quotes what its checkout will), owned by no OAuth client, so that no agent client
// sees one and a UCP platform sees no agent's. A cart exists or not (UCP has no cart status): cancelling deletes it,
// and converting it (a UCP checkout create naming `cart_id`) turns it into the checkout session with its id, as an
// agent cart's checkout does. Every function runs in the caller's transaction (the binding's, which records the answer
// under the request's idempotency key) and locks the cart it changes.
import type { Db } from '../db/knex.js';
import * as carts from '../db/repositories/carts.js';
import type { BuyerDetails, ProtocolSession } from '../domain/protocol-session.js';
import { isStorableText } from '../domain/text.js';
import type { Deps } from '../deps.js';
import { presentProtocolSession } from './checkout.js';
import {
  loadProtocolSession,
  replaceLines,
  type LineProblem,
  type RequestedProtocolLine,
} from './protocol-sessions.js';

/** What a UCP cart can be found as: an open cart of no client, or gone (converted, cancelled, expired, never was). */
const isUcpCart = (cart: Pick<carts.CartRow, 'status' | 'client_id'>) =>
  cart.status === 'open' && cart.client_id === null;

/** The cart priced now; undefined for an unknown id (or one that is no UCP cart any more). */
export async function loadUcpCart(deps: Deps, db: Db, id: string): Promise<ProtocolSession | undefined> {
  if (!isStorableText(id)) return undefined;
  const found = await carts.findCartWithLines(db, id);
  if (!found || !isUcpCart(found.cart)) return undefined;
  return presentProtocolSession(deps, found);
}

/** The cart locked for this transaction, when it is a UCP cart. */
async function lockCart(db: Db, id: string): Promise<carts.CartRow | undefined> {
  if (!isStorableText(id)) return undefined;
  const cart = await carts.findCartForUpdate(db, id);
  return cart && isUcpCart(cart) ? cart : undefined;
}

export type CartChangeOutcome =
  | { kind: 'changed'; cart: ProtocolSession }
  /** A line cannot be bought: nothing changed; the cart as it is, with the problems. */
  | { kind: 'rejected'; cart: ProtocolSession; problems: LineProblem[] }
  | { kind: 'not_found' };

/**
 * Replaces the cart's lines and buyer (an absent buyer clears it) and, when given, its discount codes (priced as a
 * checkout's, by the same promotions); the market stays the one chosen at create.
 */
export async function changeUcpCart(
  deps: Deps,
  db: Db,
  id: string,
  change: { lines: RequestedProtocolLine[]; buyer: BuyerDetails | null; codes?: string[] },
): Promise<CartChangeOutcome> {
  const cart = await lockCart(db, id);
  if (!cart) return { kind: 'not_found' };
  const problems = await replaceLines(db, deps.ids, cart, change.lines);
  if (problems.length) return { kind: 'rejected', cart: (await loadUcpCart(deps, db, id))!, problems };
  await carts.updateCart(db, id, {
    updated_at: new Date(deps.now()),
    ...carts.buyerColumns(change.buyer),
    ...(change.codes === undefined ? {} : { promo_codes: change.codes }),
  });
  return { kind: 'changed', cart: (await loadUcpCart(deps, db, id))! };
}

/** Cancels the cart: it is deleted, and its last state answered; undefined when there is no such cart. */
export async function cancelUcpCart(deps: Deps, db: Db, id: string): Promise<ProtocolSession | undefined> {
  if (!(await lockCart(db, id))) return undefined;
  const last = (await loadUcpCart(deps, db, id))!;
  await carts.deleteOpenCart(db, id);
  return last;
}

export type ConversionOutcome =
  | { kind: 'converted'; session: ProtocolSession }
  /** A line can no longer be bought, or the cart is empty: nothing changed. */
  | { kind: 'rejected'; problems: LineProblem[] }
  | { kind: 'not_found' };

/**
 * Turns the cart into the checkout session with its id: its lines (each still buyable, as a create requires), its
 * market, buyer and discount codes; `codes`, when given, replace the cart's.
 */
export async function convertUcpCart(
  deps: Deps,
  db: Db,
  id: string,
  codes: string[] | undefined,
): Promise<ConversionOutcome> {
  const cart = await lockCart(db, id);
  if (!cart) return { kind: 'not_found' };
  const lines = await carts.listLineRows(db, id);
  if (!lines.length)
    return {
      kind: 'rejected',
      problems: [{ code: 'not_found', path: '$.cart_id', content: `Cart ${id} has no line items to check out.` }],
    };
  const problems = await replaceLines(
    db,
    deps.ids,
    cart,
    // A problem names the request's cart_id: the lines are the cart's, not the request's.
    lines.map((line) => ({
      itemId: line.variant_id,
      quantity: line.quantity,
      lineId: line.id,
      idPath: '$.cart_id',
      quantityPath: '$.cart_id',
    })),
  );
  if (problems.length) return { kind: 'rejected', problems };
  await carts.updateCart(db, id, {
    status: 'ready_for_payment',
    ...(codes === undefined ? {} : { promo_codes: codes }),
    updated_at: new Date(deps.now()),
  });
  return { kind: 'converted', session: (await loadProtocolSession(deps, db, id))! };
}
