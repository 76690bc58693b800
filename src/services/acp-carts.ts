// ACP carts (the ACP cart RFC, schema.cart.json): an OAuth client's open cart, the same cart as an agent cart
// (src/services/agent-carts.ts: status `open`, owned by `client_id`), built by whole-cart replacement and turned into
// the checkout session with its id (`cart_id` on checkout create). Only an open cart is a cart here: a cancelled one,
// or one that became a session, is not found. Every function takes the `db` to work in: the binding runs each
// operation in one transaction with the write that records its answer under the request's idempotency key.
import { findRegion } from '../db/repositories/catalog.js';
import * as carts from '../db/repositories/carts.js';
import type { Db } from '../db/knex.js';
import type { BuyerDetails, ProtocolSession } from '../domain/protocol-session.js';
import { isStorableText } from '../domain/text.js';
import type { Deps } from '../deps.js';
import { presentProtocolSession } from './checkout.js';
import {
  loadProtocolSession,
  replaceResolvedLines,
  resolveProtocolLines,
  type LineProblem,
  type RequestedProtocolLine,
} from './protocol-sessions.js';

/** A cart as a create or an update asks for it: every line (the whole cart), and the buyer if given. */
export interface AcpCartContents {
  lines: RequestedProtocolLine[];
  buyer?: BuyerDetails | null;
}

export type AcpCartOutcome =
  | { kind: 'cart'; session: ProtocolSession }
  /** A line cannot be bought: nothing changed; every failing line is reported. */
  | { kind: 'rejected'; problems: LineProblem[] }
  | { kind: 'not_found' };

/** The cart (stored, open or not) priced now, in the protocols' terms. */
async function present(deps: Deps, db: Db, id: string): Promise<ProtocolSession> {
  return presentProtocolSession(deps, (await carts.findCartWithLines(db, id))!);
}

/** The client's open cart with this id, locked for the transaction when asked. */
async function openCart(db: Db, clientId: string, id: string, forUpdate = false): Promise<carts.CartRow | undefined> {
  if (!isStorableText(id)) return undefined; // no cart has such an id, and it must not reach a query
  const cart = await carts.findClientCart(db, id, clientId, { forUpdate });
  return cart?.status === 'open' ? cart : undefined;
}

/** A new open cart in the default region (an ACP cart names no market), every line checked first. */
export async function createAcpCart(
  deps: Deps,
  db: Db,
  clientId: string,
  contents: AcpCartContents,
): Promise<AcpCartOutcome> {
  const region = (await findRegion(db, undefined))!;
  const { lines, problems } = await resolveProtocolLines(db, contents.lines, region);
  if (problems.length) return { kind: 'rejected', problems };
  const now = new Date(deps.now());
  const id = deps.ids.next('cart');
  await carts.insertCart(
    db,
    {
      id,
      region_id: region.id,
      status: 'open',
      client_id: clientId,
      promo_codes: [],
      ...carts.buyerColumns(contents.buyer ?? null),
      created_at: now,
      updated_at: now,
    },
    lines.map((line) => ({ id: deps.ids.next('cali'), variant_id: line.variant.id, quantity: line.quantity })),
  );
  return { kind: 'cart', session: await present(deps, db, id) };
}

export async function getAcpCart(deps: Deps, db: Db, clientId: string, id: string): Promise<AcpCartOutcome> {
  const cart = await openCart(db, clientId, id);
  return cart ? { kind: 'cart', session: await present(deps, db, id) } : { kind: 'not_found' };
}

/** Full replacement: the lines sent become the cart's (a variant kept keeps its line id); the buyer, when sent. */
export async function updateAcpCart(
  deps: Deps,
  db: Db,
  clientId: string,
  id: string,
  contents: AcpCartContents,
): Promise<AcpCartOutcome> {
  const cart = await openCart(db, clientId, id, true);
  if (!cart) return { kind: 'not_found' };
  const region = (await findRegion(db, cart.region_id))!;
  const { lines, problems } = await resolveProtocolLines(db, contents.lines, region);
  if (problems.length) return { kind: 'rejected', problems };
  await replaceResolvedLines(db, deps.ids, id, lines);
  await carts.updateCart(db, id, {
    updated_at: new Date(deps.now()),
    ...(contents.buyer === undefined ? {} : carts.buyerColumns(contents.buyer)),
  });
  return { kind: 'cart', session: await present(deps, db, id) };
}

/** Cancels the cart, answering it as it was before (the RFC's "cart state before deletion"); then it is not found. */
export async function cancelAcpCart(deps: Deps, db: Db, clientId: string, id: string): Promise<AcpCartOutcome> {
  const cart = await openCart(db, clientId, id, true);
  if (!cart) return { kind: 'not_found' };
  const session = await present(deps, db, id);
  const now = new Date(deps.now());
  await carts.updateCart(db, id, { status: 'canceled', canceled_at: now, updated_at: now });
  return { kind: 'cart', session };
}

export type AcpCartCheckoutOutcome =
  /** The cart became this session now (`created`), or had already (a session still open: answered as it stands). */
  | { kind: 'session'; session: ProtocolSession; created: boolean }
  | { kind: 'not_found' }
  | { kind: 'empty' }
  /** The cart prices in another currency than the one requested. */
  | { kind: 'currency_mismatch'; currency: string }
  | { kind: 'rejected'; problems: LineProblem[] };

/**
 * Turns the client's open cart into the checkout session with its id, its lines and buyer as they stand (each line
 * checked as a create checks it). A cart that already became a session still open answers that session (one active
 * checkout per cart); a cancelled or paid one is not found.
 */
export async function checkOutAcpCart(
  deps: Deps,
  db: Db,
  clientId: string,
  id: string,
  currency: string,
): Promise<AcpCartCheckoutOutcome> {
  if (!isStorableText(id)) return { kind: 'not_found' };
  const cart = await carts.findClientCart(db, id, clientId, { forUpdate: true });
  if (cart?.status === 'ready_for_payment')
    return { kind: 'session', session: (await loadProtocolSession(deps, db, id))!, created: false };
  if (cart?.status !== 'open') return { kind: 'not_found' };
  const region = (await findRegion(db, cart.region_id))!;
  if (region.currency_code.toLowerCase() !== currency.toLowerCase())
    return { kind: 'currency_mismatch', currency: region.currency_code.toLowerCase() };
  const stored = await carts.listLineRows(db, id);
  if (!stored.length) return { kind: 'empty' };
  const requested = stored.map((line, index) => ({
    itemId: line.variant_id,
    quantity: line.quantity,
    idPath: `$.line_items[${index}].item.id`,
    quantityPath: `$.line_items[${index}].quantity`,
  }));
  const { problems } = await resolveProtocolLines(db, requested, region);
  if (problems.length) return { kind: 'rejected', problems };
  await carts.touchCart(db, id, new Date(deps.now()), 'ready_for_payment');
  return { kind: 'session', session: (await loadProtocolSession(deps, db, id))!, created: true };
}
