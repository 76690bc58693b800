// Creating a checkout session, the one use case every surface calls: REST and MCP (createCheckoutSession, under a key
// createCheckoutSessionIdempotently), agent carts (createOpenCart) and ACP and UCP (createProtocolSession). Each
// surface states its request as a NewSession; the create then
//   1. reads, in one statement (findNewCartReads, batched with every other create's), what the request names: its
//      region or market, the variants, their prices, the promotions and, under a key, the key's earlier answer;
//      a create like an earlier one is priced from that one's read instead (Deps.earlierReads.creates);
//   2. resolves its lines (resolveLines, src/domain/cart-items.ts) and builds the cart, priced;
//   3. stores it in one statement through the group commit (carts.insertCart; under a protocol key with its answer,
//      storeProtocolCreate), only if the catalogue is still at the version an earlier read saw;
// and each surface presents the stored cart in its wire format: presentCart (REST, MCP), the agent's cart view
// (src/services/agent-carts.ts) and presentProtocolSession (ACP, UCP).
import type { components } from '../../../codegen/types.js';
import * as carts from '../../db/repositories/carts.js';
import { findNewCartReads, findRegion, type NewCartRead, type NewCartReads } from '../../db/repositories/catalog.js';
import type { ProtocolAnswer, ProtocolCreateStored, StoredAnswer } from '../../db/repositories/protocol-idempotency.js';
import { storeProtocolCreate } from '../../db/repositories/protocol-sessions.js';
import type { Db } from '../../db/knex.js';
import {
  lineError,
  referencesOf,
  requestedItems,
  resolveLines,
  variantReferences,
  type LineProblem,
  type RequestedItem,
} from '../../domain/cart-items.js';
import { BadRequest } from '../../domain/errors.js';
import { canonicalCodes } from '../../domain/promotions.js';
import type { BuyerDetails, ProtocolSession } from '../../domain/protocol-session.js';
import type { Deps } from '../../deps.js';
import { requireRegion } from '../catalog.js';
import { checkedDestination, checkedProtocolDestination, termsFor, type SessionDestination } from './destination.js';
import type { DestinationInput, DestinationProblem } from '../../domain/destination.js';
import type { FulfilmentTerms, ShippingCode } from '../../domain/fulfilment.js';
import { presentCart, presentProtocolSession, type CheckoutSession } from '../checkout.js';
import type { ProtocolResponse } from '../../protocols/answers.js';
import {
  checkoutKeys,
  claimWithEarlierWrite,
  claimWithWrite,
  protocolKeys,
  type IdempotentRequest,
  type KeyOutcome,
  type KeyRefusal,
  type WriteAnswer,
} from '../idempotency/index.js';
import {
  protocolItems,
  protocolProblems,
  type LineProblem as ProtocolLineProblem,
  type RequestedProtocolLine,
} from '../protocol-sessions.js';

type CreateRequest = components['schemas']['CheckoutSessionCreateRequest'];

/** A protocol create's answer (rendered by its binding), and how to store it with what it created. */
type CreateAnswer = WriteAnswer<ProtocolResponse, StoredAnswer, ProtocolAnswer>;

/** Whose cart it is: a public checkout session, or an agent client's open cart. */
export type SessionOwner = Pick<carts.CartRow, 'status' | 'client_id'>;

/**
 * Where the session prices: REST names a region (none: the default); UCP the buyer's country (none, or one no region
 * serves: the default region); ACP a currency (only the region selling in it).
 */
export type Market = { regionId: string | undefined } | { country: string | undefined } | { currency: string };

/** A create in any surface's terms. */
export interface NewSession {
  owner: SessionOwner;
  market: Market;
  items: RequestedItem[];
  /** Promotion codes as requested. */
  codes: string[];
  buyer: BuyerDetails | null;
  fulfillmentDetails?: unknown;
  /** Protocol sessions: who is told of the order it becomes (carts.origin). */
  origin?: object | undefined;
  /** REST, MCP and agent carts: the checked destination and option, and the terms they bring (checked before the read). */
  destination?: CheckedDestination | undefined;
}

/** A create's destination, checked against its region's countries, with the terms it brings to the price today. */
export interface CheckedDestination extends Partial<SessionDestination> {
  terms: FulfilmentTerms | undefined;
}

const PUBLIC_SESSION: SessionOwner = { status: 'ready_for_payment', client_id: null };

/** What a create reads, but its key's record; as JSON, its place among the earlier reads. */
function readOf({ market, items, codes }: NewSession): NewCartRead {
  const refs = variantReferences(referencesOf(items));
  const read = { refs, codes: canonicalCodes(codes) };
  if ('regionId' in market) return { regionId: market.regionId, ...read };
  const country = 'country' in market ? market.country?.toLowerCase() || null : null;
  const currency = 'currency' in market ? market.currency.toLowerCase() : null;
  return { regionId: undefined, market: { country, currency }, ...read };
}

/** A new cart built from a create's reads: stored as `cart` and `lines`, presented as `session`. */
export type Built<Session> =
  | { kind: 'built'; cart: carts.NewCartRow; lines: carts.NewLine[]; session: Session }
  /** No region prices in the requested market. */
  | { kind: 'no_region' }
  /** A line cannot be bought: every problem, nothing built. */
  | { kind: 'rejected'; problems: LineProblem[] };

/**
 * Builds the cart a create stores from what it read, and presents it as the surface shows a session: the same
 * figures a later read of the stored cart gives (the session read model, carts.StoredSession).
 */
function build<Session>(
  deps: Deps,
  request: NewSession,
  reads: NewCartReads,
  present: (stored: carts.StoredSession) => Session,
): Built<Session> {
  const { region } = reads;
  if (!region) return { kind: 'no_region' };
  const { lines, problems } = resolveLines(request.items, reads.variants, region.currency_code);
  if (problems.length) return { kind: 'rejected', problems };
  const now = new Date(deps.now());
  const { buyer_email, buyer_details } = carts.buyerColumns(request.buyer);
  const cart = {
    id: deps.ids.next('cart'),
    region_id: region.id,
    ...request.owner,
    promo_codes: request.codes,
    buyer_email,
    buyer_details: carts.asJsonb(buyer_details) as Record<string, string> | null,
    fulfillment_details: carts.asJsonb(request.fulfillmentDetails ?? null),
    ...(request.origin ? { origin: request.origin } : {}),
    shipping_address: (carts.asJsonb(request.destination?.shipping_address ?? null) ??
      null) as carts.CartRow['shipping_address'],
    shipping_option: request.destination?.shipping_option ?? null,
    created_at: now,
    updated_at: now,
    canceled_at: null,
    completed_at: null,
  };
  const rows = lines.map(({ variant, quantity }) => ({
    id: deps.ids.next('cali'),
    variant_id: variant.id,
    quantity,
    title: variant.title,
    product_title: variant.product_title,
    price_amount: variant.price_amount,
    product_id: variant.product_id,
    sku: variant.sku,
    thumbnail: variant.thumbnail,
  }));
  const session = present({
    cart,
    lines: rows,
    region,
    promotions: reads.promotions,
    order: undefined,
    terms: request.destination?.terms,
  });
  return {
    kind: 'built',
    cart,
    lines: rows.map(({ id, variant_id, quantity }) => ({ id, variant_id, quantity })),
    session,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// REST, MCP and agent carts: a failure is thrown (the first line problem, REST's 400).

const PROMO_ALIASES = [
  'promo_codes',
  'promo_code',
  'discount_code',
  'discount_codes',
  'coupon_code',
  'coupon_codes',
] as const;

/** Every requested code, from `promo_codes` and its aliases, in that order. */
export function requestedPromoCodes(input: CreateRequest): string[] {
  return PROMO_ALIASES.flatMap((name) => {
    const value = input[name];
    return value === undefined ? [] : Array.isArray(value) ? value : [value];
  });
}

/** A REST create request (also MCP's arguments and an agent's new cart) as a NewSession. */
function restSession(input: CreateRequest, owner: SessionOwner, destination?: CheckedDestination): NewSession {
  return {
    owner,
    market: { regionId: input.region_id },
    items: requestedItems(input.items),
    codes: requestedPromoCodes(input),
    buyer: input.buyer?.email === undefined ? null : { email: input.buyer.email },
    destination,
  };
}

/**
 * The destination a create sends, checked against the countries of its region (an unknown region is REST's 400 as
 * before), with the terms it brings; undefined when it sends neither an address nor an option. Checked before
 * anything is read or stored: an invalid address is the caller's 400 naming the field, and creates nothing.
 */
async function createDestination(deps: Deps, input: CreateRequest): Promise<CheckedDestination | undefined> {
  if (input.shipping_address === undefined && input.shipping_option === undefined) return undefined;
  if (input.shipping_address === undefined) return { shipping_option: input.shipping_option, terms: undefined };
  const region = requireRegion(await findRegion(deps.db, input.region_id), input.region_id, 'region_id');
  const checked = await checkedDestination(deps.db, region.id, input.shipping_address, input.shipping_option);
  return { ...checked, terms: await termsFor(deps, region.id, checked.shipping_address) };
}

/** The cart built, or the failure REST answers: an unknown region, else the first line that cannot be bought. */
function builtOrThrown<Session>(
  deps: Deps,
  input: CreateRequest,
  request: NewSession,
  reads: NewCartReads,
  present: (stored: carts.StoredSession) => Session,
) {
  const built = build(deps, request, reads, present);
  if (built.kind === 'no_region') throw requireRegion(undefined, input.region_id, 'region_id');
  if (built.kind === 'rejected') throw lineError(built.problems[0]!);
  return built;
}

/** The cart built from an earlier read, or undefined when the request fails so built (a fresh read judges it). */
function builtFromEarlier<Session>(
  deps: Deps,
  request: NewSession,
  reads: NewCartReads,
  present: (stored: carts.StoredSession) => Session,
) {
  const built = build(deps, request, reads, present);
  return built.kind === 'built' ? built : undefined;
}

/**
 * Stores a new cart (see carts.insertCart); under a key, not when another request's answer took the key first.
 * A variant deleted between the create's read and this insert is answered as the same request sent now would be, an
 * unknown item, rather than as an internal error.
 */
async function storeNewCart(
  deps: Deps,
  { cart, lines }: { cart: carts.NewCartRow; lines: carts.NewLine[] },
  stored?: carts.StoredUnder,
): Promise<carts.CartStored> {
  try {
    return await carts.insertCart(deps.db, cart, lines, stored);
  } catch (error) {
    if (!carts.isMissingVariant(error)) throw error;
    throw new BadRequest('unknown_item', 'An item left the catalog while the session was being created.', {
      param: 'items',
      next: { to: 'list_products' },
    });
  }
}

/**
 * Creates a session without a key, presented by `present`: priced from an earlier create's read when one read the
 * same and the catalogue has not changed since (only the insert is sent), else from its own read.
 */
async function createSession<Session>(
  deps: Deps,
  input: CreateRequest,
  owner: SessionOwner,
  present: (stored: carts.StoredSession) => Session,
): Promise<Session> {
  const request = restSession(input, owner, await createDestination(deps, input));
  const read = readOf(request);
  const readKey = JSON.stringify(read);
  const earlier = deps.earlierReads.creates.get(readKey);
  const fromEarlier = earlier && builtFromEarlier(deps, request, earlier, present);
  if (fromEarlier && (await storeNewCart(deps, fromEarlier, { pricedAt: earlier.catalogVersion })).stored)
    return fromEarlier.session;
  const reads = await findNewCartReads(deps.db, read);
  const built = builtOrThrown(deps, input, request, reads, present);
  await storeNewCart(deps, built);
  deps.earlierReads.creates.set(readKey, reads);
  return built.session;
}

export function createCheckoutSession(deps: Deps, input: CreateRequest): Promise<CheckoutSession> {
  return createSession(deps, input, PUBLIC_SESSION, (stored) => presentCart(deps, stored));
}

/** An agent client's open cart, created as a session is; `present` gives the agent's view of it. */
export function createOpenCart<Session>(
  deps: Deps,
  clientId: string,
  input: CreateRequest,
  present: (stored: carts.StoredSession) => Session,
): Promise<Session> {
  return createSession(deps, input, { status: 'open', client_id: clientId }, present);
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
  const session = restSession(input, PUBLIC_SESSION, await createDestination(deps, input));
  const present = (stored: carts.StoredSession) => presentCart(deps, stored);
  const read = readOf(session);
  const readKey = JSON.stringify(read);
  const outcome = await claimWithWrite(deps, checkoutKeys, request, {
    earlier: deps.earlierReads.creates.get(readKey),
    async read(keyToRead) {
      const reads = await findNewCartReads(deps.db, { ...read, key: keyToRead });
      return { reads, record: reads.keyRecord };
    },
    answer(reads, earlier) {
      const built = earlier
        ? builtFromEarlier(deps, session, reads, present)
        : builtOrThrown(deps, input, session, reads, present);
      if (!built) return undefined;
      return {
        answer: { body: built.session, apiVersion },
        async store(answer) {
          const pricedAt = earlier ? reads.catalogVersion : undefined;
          const stored = await storeNewCart(deps, built, { answer, pricedAt });
          // As for a create without a key, the read serves later creates once this one is settled.
          if (!earlier) deps.earlierReads.creates.set(readKey, { ...reads, keyRecord: undefined });
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

// ---------------------------------------------------------------------------------------------------------------
// ACP and UCP: every outcome is an answer the binding renders, stored under the request's key.

/** UCP names the buyer's country (none, or one no region serves: the default region); ACP a currency. */
export type ProtocolMarket = { country: string | undefined } | { currency: string };

export interface NewProtocolSession<M extends ProtocolMarket = ProtocolMarket> {
  /** A public checkout session unless said otherwise (a UCP cart: an open cart of no client). */
  owner?: SessionOwner;
  market: M;
  lines: RequestedProtocolLine[];
  codes: string[];
  buyer: BuyerDetails | null;
  fulfillmentDetails?: unknown;
  /**
   * Where the goods go (UCP's fulfillment): the address, checked against the countries of the region the create's read
   * finds (an address the store does not ship to is not stored, and reported with the session), and the option chosen.
   */
  shipping?: { address?: DestinationInput; option?: ShippingCode | null };
  /** Who is told of the order the session becomes (src/services/order-events.ts). */
  origin?: object | undefined;
}

export type CreateOutcome<M extends ProtocolMarket = ProtocolMarket> =
  | {
      kind: 'created';
      session: ProtocolSession;
      countryServed: boolean;
      /** The address's problems, each naming its field: the session was created without it. */
      destinationProblems: DestinationProblem[];
    }
  /** A line cannot be bought: nothing is stored, and every failing line is reported. */
  | { kind: 'rejected'; problems: ProtocolLineProblem[] }
  /** No region sells in the requested currency. */
  | (M extends { currency: string } ? { kind: 'unsupported_currency'; currencies: string[] } : never);

/** A create as a binding asks for it: the session to create, and its answer to each outcome. */
export interface CreatePlan<M extends ProtocolMarket = ProtocolMarket> {
  input: NewProtocolSession<M>;
  respond(outcome: CreateOutcome<M>): ProtocolResponse;
}

/**
 * A create request as a binding understood it: the plan (its protocol errors rendered as answers), or the answer it
 * was refused with before anything was read (an invalid body).
 */
export type ProtocolCreate = CreatePlan | { input?: undefined; refused: ProtocolResponse };

/** A protocol create as a NewSession; a refused one reads nothing but the key's record. */
function protocolSession(create: ProtocolCreate): NewSession {
  const { input } = create;
  if (!input) return { owner: PUBLIC_SESSION, market: { country: undefined }, items: [], codes: [], buyer: null };
  return {
    owner: input.owner ?? PUBLIC_SESSION,
    market: input.market,
    items: protocolItems(input.lines),
    codes: input.codes,
    buyer: input.buyer,
    fulfillmentDetails: input.fulfillmentDetails,
    origin: input.origin,
  };
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
async function storeProtocolAnswer(
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
/** A protocol create's reads: the create's, and its address checked against the region they found. */
type ProtocolCreateReads = NewCartReads & { destination?: ProtocolDestination };

type ProtocolDestination = Awaited<ReturnType<typeof checkedProtocolDestination>>;

/** The address a protocol create sends, checked against the region its read found (none without an address). */
async function protocolDestination(
  deps: Deps,
  create: ProtocolCreate,
  reads: NewCartReads,
): Promise<ProtocolCreateReads> {
  const address = create.input?.shipping?.address;
  if (!address || !reads.region) return reads;
  return { ...reads, destination: await checkedProtocolDestination(deps, deps.db, reads.region.id, address) };
}

/** The session to build with its destination (an invalid address left out), and the address's problems. */
function withProtocolDestination(
  create: ProtocolCreate,
  request: NewSession,
  reads: ProtocolCreateReads,
): { request: NewSession; problems: DestinationProblem[] } {
  const option = create.input?.shipping?.option ?? undefined;
  const checked = reads.destination;
  if (checked?.ok)
    return {
      request: {
        ...request,
        destination: { shipping_address: checked.destination, shipping_option: option, terms: checked.terms },
      },
      problems: [],
    };
  return {
    request: option ? { ...request, destination: { shipping_option: option, terms: undefined } } : request,
    problems: checked?.problems ?? [],
  };
}

function answerCreate(
  deps: Deps,
  create: ProtocolCreate,
  sessionRequest: NewSession,
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
          store: (answer: ProtocolAnswer | undefined) =>
            storeProtocolAnswer(db, undefined, answer, { pricedAt: undefined }),
        };
  if (!create.input) return answerOnly(create.refused);
  const { input, respond } = create;
  // A country no region serves prices in the default region: only a store without one has none.
  if (!('currency' in input.market)) requireRegion(reads.region, undefined);
  const { request, problems: destinationProblems } = withProtocolDestination(create, sessionRequest, reads);
  const built = build(deps, request, reads, (stored) => presentProtocolSession(deps, stored));
  if (built.kind === 'no_region')
    return answerOnly(respond({ kind: 'unsupported_currency', currencies: reads.currencies }));
  if (built.kind === 'rejected')
    return answerOnly(respond({ kind: 'rejected', problems: protocolProblems(built.problems) }));
  const pricedAt = earlier ? reads.catalogVersion : undefined;
  return {
    answer: respond({
      kind: 'created',
      session: built.session,
      countryServed: reads.countryServed,
      destinationProblems,
    }),
    store: (answer) => storeProtocolAnswer(db, built, answer, { pricedAt, grant }),
  };
}

/**
 * Creates a session exactly once per key (createIdempotently): one statement reads what the create needs with the
 * key's record, the session is built and priced from it, and one statement stores the cart, its lines and the answer
 * (or the answer alone, when nothing could be created). A create like an earlier one is priced from that one's read
 * and sends only the store. Without a key the cart goes through the group commit.
 */
export function createProtocolSession(
  deps: Deps,
  call: IdempotentRequest | undefined,
  create: ProtocolCreate,
): Promise<KeyOutcome<ProtocolResponse>> {
  const request = protocolSession(create);
  const read = readOf(request);
  const readKey = JSON.stringify(read);
  // A create with an address checks it against the region its own read finds: never priced from an earlier read.
  const withAddress = Boolean(create.input?.shipping?.address);
  return claimWithWrite(deps, protocolKeys, call, {
    earlier: withAddress ? undefined : deps.earlierReads.creates.get(readKey),
    async read(key) {
      const reads = await findNewCartReads(deps.db, { ...read, protocolKey: key });
      deps.earlierReads.creates.set(readKey, { ...reads, protocolRecord: undefined });
      return { reads: await protocolDestination(deps, create, reads), record: reads.protocolRecord };
    },
    answer: (reads, earlier) => answerCreate(deps, create, request, reads, earlier),
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
  const request = protocolSession(create);
  const earlier = deps.earlierReads.creates.get(JSON.stringify(readOf(request)));
  // An address is checked against a fresh read (createProtocolSession).
  if (!earlier || create.input?.shipping?.address) return Promise.resolve(undefined);
  return claimWithEarlierWrite(deps, protocolKeys, call, earlier, (reads) =>
    answerCreate(deps, create, request, reads, true, grant),
  );
}
