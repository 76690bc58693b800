// Carts and their line items (a checkout session is a cart).
import type { Knex } from 'knex';
import { asPrepared, batchedPerDatabase, readByKey, type Db } from '../knex.js';
import { canonicalCodes, type Promotion } from '../../domain/promotions.js';
import type { BuyerDetails } from '../../domain/protocol-session.js';
import type { Destination } from '../../domain/destination.js';
import type { FulfilmentTerms, ShippingCode } from '../../domain/fulfilment.js';
import { REGION_COLUMNS, type RegionRow } from './catalog.js';
import { stillPricedAt } from './catalog-version.js';
import {
  ANSWERS_RECORDSET,
  answerRecord,
  INSERT_ANSWERS,
  keyRecordOf,
  type IdempotencyRecord,
  type KeyAnswer,
  type KeyClaimed,
} from './idempotency.js';
import type { OrderLineRow, OrderRow, OrderWithLines } from './orders.js';
import { findPromotions, promotionsOf, type PromotionRow } from './promotions.js';

/**
 * `open`: an agent cart that can still change; `ready_for_payment`: a checkout session; `canceled`: final;
 * `completed`: paid, an order exists (final).
 */
export type CartStatus = 'open' | 'ready_for_payment' | 'canceled' | 'completed';

export interface CartRow {
  id: string;
  region_id: string;
  status: CartStatus;
  buyer_email: string | null;
  promo_codes: string[];
  client_id: string | null;
  created_at: Date;
  updated_at: Date;
  canceled_at: Date | null;
  completed_at: Date | null;
  /** Buyer names and phone given through the ACP/UCP bindings (`buyer_email` holds the email). */
  buyer_details?: Record<string, string> | null;
  /** ACP `fulfillment_details`, stored and echoed as sent. */
  fulfillment_details?: unknown;
  /** The checked destination (src/domain/destination.ts), or null: the session is priced as an estimate. */
  shipping_address?: Destination | null;
  /** The shipping option chosen, or null: the region's first (Standard). */
  shipping_option?: ShippingCode | null;
  /**
   * Who is told of the order this session becomes, for sessions created through a protocol binding (UCP: the platform
   * and its order-webhook subscription; ACP: the client), or null (src/services/order-events.ts).
   */
  origin?: object | null;
}

/** A stored line joined with its variant's current title, stock and price in the cart's region. */
export interface CartLineRow {
  id: string;
  variant_id: string;
  quantity: number;
  title: string;
  product_title: string;
  price_amount: number | null;
  product_id: string;
  sku: string | null;
  thumbnail: string | null;
}

export interface NewLine {
  id: string;
  variant_id: string;
  quantity: number;
}

/** jsonb columns are written as JSON text: the driver would send an array as a PostgreSQL array. */
function jsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** The buyer as stored: the email in its column, names and phone in `buyer_details`. */
export function buyerColumns(buyer: BuyerDetails | null): Pick<CartRow, 'buyer_email' | 'buyer_details'> {
  if (!buyer) return { buyer_email: null, buyer_details: null };
  const { email, ...details } = buyer;
  return {
    buyer_email: email ?? null,
    buyer_details: Object.keys(details).length ? (details as Record<string, string>) : null,
  };
}

/** The buyer a cart's columns hold, or null for none. */
export function buyerOf(cart: Pick<CartRow, 'buyer_email' | 'buyer_details'>): BuyerDetails | null {
  const details = cart.buyer_details ?? {};
  const buyer = { ...(cart.buyer_email ? { email: cart.buyer_email } : {}), ...details };
  return Object.keys(buyer).length ? buyer : null;
}

/**
 * A value as a jsonb column gives it back: jsonb keeps an object's keys ordered shorter first, then bytewise, whatever
 * order they were sent in, so a session built from what was just stored shows its jsonb columns as a read would.
 */
export function asJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asJsonb);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([key, member]) => [key, Buffer.from(key), asJsonb(member)] as const);
  entries.sort(([, a], [, b]) => a.length - b.length || Buffer.compare(a, b));
  return Object.fromEntries(entries.map(([key, , member]) => [key, member]));
}

function withJsonColumns<T extends Partial<CartRow>>(row: T): T {
  return {
    ...row,
    ...('buyer_details' in row ? { buyer_details: jsonText(row.buyer_details) } : {}),
    ...('fulfillment_details' in row ? { fulfillment_details: jsonText(row.fulfillment_details) } : {}),
    ...('shipping_address' in row ? { shipping_address: jsonText(row.shipping_address) } : {}),
  };
}

/**
 * A new cart and its lines, as data-modifying CTEs: they commit or fail together, in one round trip. The cart is
 * inserted only when `condition` holds (its key was claimed); `new_cart` then returns its id.
 */
function newCartAndLines(condition: string): string {
  return `new_cart as (
  insert into carts (id, region_id, status, buyer_email, promo_codes, client_id, created_at, updated_at,
                     buyer_details, fulfillment_details, shipping_address, shipping_option, origin)
  select ?, ?, ?, ?, ?::text[], ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?, ?::jsonb
  where ${condition}
  returning id
), new_lines as (
  insert into cart_line_items (id, cart_id, variant_id, quantity, position)
  select line.id, new_cart.id, line.variant_id, line.quantity, line.position - 1
  from new_cart, unnest(?::text[], ?::text[], ?::int[]) with ordinality as line (id, variant_id, quantity, position)
)`;
}

const NEW_CART_AND_LINES = `with ${newCartAndLines(stillPricedAt('?::bigint'))} select id from new_cart`;

export type NewCartRow = Omit<CartRow, 'canceled_at' | 'completed_at'>;

interface CartToStore {
  cart: NewCartRow;
  lines: NewLine[];
  answer: KeyAnswer | undefined;
  pricedAt: string | undefined;
}

/** Whether a cart was stored (under a key: with its answer). */
export type CartStored = KeyClaimed<IdempotencyRecord>;

const NOT_STORED: CartStored = { stored: false, keyRecord: undefined };

/** One cart without a key and its lines, in one statement of fixed text. */
async function insertOneCart(db: Db, { cart, lines, pricedAt }: CartToStore): Promise<CartStored> {
  const { rows } = (await asPrepared(
    'insert_cart',
    db.raw(NEW_CART_AND_LINES, newCartBindings(cart, lines, [pricedAt ?? null])),
  )) as { rows: unknown[] };
  return rows.length === 1 ? { stored: true } : NOT_STORED;
}

/** A cart stored alone: without a key by insertOneCart, under one by the batch's statement (a batch of one). */
async function insertCartAlone(db: Db, toStore: CartToStore): Promise<CartStored> {
  return toStore.answer ? (await insertManyCarts(db, [toStore]))[0]! : insertOneCart(db, toStore);
}

/** The bindings of newCartAndLines, in its order, with those of its condition. */
function newCartBindings(cart: NewCartRow, lines: NewLine[], condition: Knex.RawBinding[] = []): Knex.RawBinding[] {
  return [
    cart.id,
    cart.region_id,
    cart.status,
    cart.buyer_email,
    cart.promo_codes,
    cart.client_id,
    cart.created_at,
    cart.updated_at,
    jsonText(cart.buyer_details),
    jsonText(cart.fulfillment_details),
    jsonText(cart.shipping_address),
    cart.shipping_option ?? null,
    jsonText(cart.origin ?? null),
    ...condition,
    lines.map((line) => line.id),
    lines.map((line) => line.variant_id),
    lines.map((line) => line.quantity),
  ];
}

/**
 * Carts and their lines from two JSON arrays of records (cartRecords, lineRecords, bound in that order), as the CTEs
 * `new_carts` (returning the ids it stored) and `new_lines`: a cart under a key is inserted only if its key is among
 * the (scope, key) rows of the CTE `claimed`, the statement's claim of the batch's keys.
 */
export const NEW_CARTS_AND_LINES = `new_carts as (
  insert into carts (id, region_id, status, buyer_email, promo_codes, client_id, created_at, updated_at,
                     buyer_details, fulfillment_details, shipping_address, shipping_option, origin)
  select id, region_id, status, buyer_email, promo_codes, client_id, created_at, updated_at,
         buyer_details, fulfillment_details, shipping_address, shipping_option, origin
  from jsonb_to_recordset(?::jsonb) as cart (id text, region_id text, status text, buyer_email text,
    promo_codes text[], client_id text, created_at timestamptz, updated_at timestamptz, buyer_details jsonb,
    fulfillment_details jsonb, shipping_address jsonb, shipping_option text, origin jsonb, key_scope text, key text,
    priced_at bigint)
  where (cart.key is null or (cart.key_scope, cart.key) in (select scope, key from claimed))
    and ${stillPricedAt('cart.priced_at')}
  returning id
), new_lines as (
  insert into cart_line_items (id, cart_id, variant_id, quantity, position)
  select id, cart_id, variant_id, quantity, position
  from jsonb_to_recordset(?::jsonb) as line (id text, cart_id text, variant_id text, quantity int, position int)
  where line.cart_id in (select id from new_carts)
)`;

/** The bindings of NEW_CARTS_AND_LINES: each cart under its key (if any), as JSON arrays of records. */
export function newCartsAndLinesBindings(
  batch: Array<{
    cart: NewCartRow;
    lines: NewLine[];
    key: { scope: string; key: string } | undefined;
    pricedAt?: string | undefined;
  }>,
): [string, string] {
  // The columns the statement reads, field by field: on Node 20 a literal that starts with a spread, `{ ...cart, key }`,
  // takes a runtime call for each property after it (12 µs a cart here; src/domain/pricing.ts).
  const cartRecords = batch.map(({ cart, key, pricedAt }) => ({
    id: cart.id,
    region_id: cart.region_id,
    status: cart.status,
    buyer_email: cart.buyer_email,
    promo_codes: cart.promo_codes,
    client_id: cart.client_id,
    created_at: cart.created_at,
    updated_at: cart.updated_at,
    buyer_details: cart.buyer_details ?? null,
    fulfillment_details: cart.fulfillment_details ?? null,
    shipping_address: cart.shipping_address ?? null,
    shipping_option: cart.shipping_option ?? null,
    origin: cart.origin ?? null,
    key_scope: key?.scope ?? null,
    key: key?.key ?? null,
    priced_at: pricedAt ?? null,
  }));
  const lineRecords = batch.flatMap(({ cart, lines }) =>
    lines.map((line, position) => ({
      id: line.id,
      cart_id: cart.id,
      variant_id: line.variant_id,
      quantity: line.quantity,
      position,
    })),
  );
  return [JSON.stringify(cartRecords), JSON.stringify(lineRecords)];
}

/**
 * Many carts, their lines and their keys' answers in one statement: three JSON arrays of records, so the text stays
 * the same whatever the batch holds (one plan per connection). A cart under a key is inserted only if its key took
 * the answer. The statement returns the ids of the carts it stored, and for each key it did not claim the key's
 * record as of the statement's start (one committed meanwhile is not there).
 */
const NEW_CARTS_LINES_AND_ANSWERS = `with answers as (
  select * from ${ANSWERS_RECORDSET}
), claimed as (
  ${INSERT_ANSWERS}
), ${NEW_CARTS_AND_LINES}
select id, null as scope, null as key, null::json as key_record from new_carts
union all
select null, answers.scope, answers.key, ${keyRecordOf('answers.scope', 'answers.key')}
from answers where (answers.scope, answers.key) not in (select scope, key from claimed)`;

const keyOf = (answer: { scope: string; key: string }) => `${answer.scope}\n${answer.key}`;

interface StoredRow {
  /** A cart stored, or null on a row of a key not claimed. */
  id: string | null;
  scope: string | null;
  key: string | null;
  key_record: IdempotencyRecord | null;
}

async function insertManyCarts(db: Db, batch: CartToStore[]): Promise<CartStored[]> {
  // A key twice in one batch: the first one goes, the others are not stored (as if they came right after it). The
  // answers go in key order, so two statements claiming the same keys take their locks in the same order.
  const keys = new Set<string>();
  const sent = batch.filter(({ answer }) => {
    if (!answer) return true;
    if (keys.has(keyOf(answer))) return false;
    keys.add(keyOf(answer));
    return true;
  });
  const answers = sent
    .flatMap(({ answer, pricedAt }) => (answer ? [answerRecord(answer, pricedAt)] : []))
    .sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
  const carts = newCartsAndLinesBindings(
    sent.map(({ cart, lines, answer, pricedAt }) => ({ cart, lines, key: answer, pricedAt })),
  );
  const { rows } = (await asPrepared(
    'insert_carts',
    db.raw(NEW_CARTS_LINES_AND_ANSWERS, [JSON.stringify(answers), ...carts]),
  )) as { rows: StoredRow[] };
  const stored = new Set(rows.map((row) => row.id));
  const records = new Map(rows.map((row) => [keyOf({ scope: row.scope!, key: row.key! }), row.key_record]));
  const wasSent = new Set(sent);
  return batch.map((item): CartStored => {
    if (stored.has(item.cart.id)) return { stored: true };
    const record = item.answer && wasSent.has(item) ? records.get(keyOf(item.answer)) : undefined;
    return { stored: false, keyRecord: record ?? undefined };
  });
}

/**
 * Cart inserts outside a transaction go through one group commit per database (see src/db/batching.ts): while an
 * insert statement runs, further carts queue, and the next statement stores them all (at most
 * MAX_CARTS_PER_STATEMENT); a second statement starts only for a full batch (MAX_INSERTS_IN_FLIGHT), for a commit slow
 * enough that carts keep coming. PostgreSQL pays one commit and one statement for the lot instead of one each. Under
 * the bench's 32 connections a statement carried 10.2–10.4 carts this way, against 7.2–7.3 when any batch could take
 * the second slot.
 */
const MAX_INSERTS_IN_FLIGHT = 2;
const MAX_CARTS_PER_STATEMENT = 16;
const cartStore = batchedPerDatabase<CartToStore, CartStored>('cart_store', (db) => ({
  one: (toStore) => insertCartAlone(db, toStore),
  many: (batch) => insertManyCarts(db, batch),
  maxBatch: MAX_CARTS_PER_STATEMENT,
  maxInFlight: MAX_INSERTS_IN_FLIGHT,
  eagerInFlight: 1,
}));

/**
 * What a new cart is stored under: its key's answer (a create under an Idempotency-Key), and the catalogue version it
 * was priced at when priced from an earlier read (NewCartReads' catalogVersion), so that it is stored, and its key
 * claimed, only if nothing it was priced from changed since (otherwise nothing is stored).
 */
export interface StoredUnder {
  answer?: KeyAnswer | undefined;
  pricedAt?: string | undefined;
}

/**
 * Stores a cart and its lines in a single statement (instead of a transaction's four or five round trips), with a
 * fixed text whatever the number of lines, so that PostgreSQL plans it once per connection. Under an Idempotency-Key,
 * the same statement claims the key with its `answer`, so a stored answer always describes a stored cart, and the
 * cart is stored only if the key took the answer: when another request's answer holds the key nothing is stored, and
 * the outcome carries that record if the statement saw it.
 * Resolves once committed. Outside a transaction the statement may carry other requests' carts too (group commit);
 * a batch that fails is retried cart by cart, so each request gets the outcome and the error it would get alone.
 */
export async function insertCart(
  db: Db,
  cart: NewCartRow,
  lines: NewLine[],
  stored: StoredUnder = {},
): Promise<CartStored> {
  const toStore = { cart, lines, answer: stored.answer, pricedAt: stored.pricedAt };
  return db.isTransaction ? insertCartAlone(db, toStore) : cartStore(db)(toStore);
}

/** The insert named a variant that was deleted after the create read it (the line's foreign key). */
export function isMissingVariant(error: unknown): boolean {
  const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
  return code === '23503' && constraint === 'cart_line_items_variant_id_foreign';
}

export async function findCart(db: Db, id: string): Promise<CartRow | undefined> {
  return (await db('carts').where({ id }).first()) as CartRow | undefined;
}

const CART_COLUMNS = [
  'id',
  'region_id',
  'status',
  'buyer_email',
  'promo_codes',
  'client_id',
  'created_at',
  'updated_at',
  'canceled_at',
  'completed_at',
  'buyer_details',
  'fulfillment_details',
  'shipping_address',
  'shipping_option',
] as const;

/**
 * A stored cart with everything it is presented from, as findRegion, findPromotions and findOrderBySession give it.
 * Read-only: requests reading the same session in one batched statement share its parsed row.
 */
export interface StoredSession {
  cart: Readonly<CartRow>;
  /** Its lines in order, each with its variant's current title and price in the cart's region. */
  lines: ReadonlyArray<Readonly<CartLineRow>>;
  region: Readonly<RegionRow> | undefined;
  /** The stored promotions among the cart's codes (canonical form), keyed by code. */
  promotions: Map<string, Promotion>;
  /** The order a completed session became (looked up for completed sessions only). */
  order: OrderWithLines | undefined;
  /**
   * What the cart's destination brings to its price (loaded by the checkout service beside this read, for a cart with
   * a shipping address): undefined when it has none, or its region no longer ships there.
   */
  terms?: FulfilmentTerms | undefined;
}

/**
 * The one statement that reads sessions ($1: the carts' ids, one or many): for each cart found, the cart, its priced
 * lines, its region, the promotions its codes name and, once completed, its order with the order's lines. One row per
 * cart; what has many rows travels as JSON. Its text is fixed whatever the number of ids, so PostgreSQL plans it once
 * per connection. The codes are matched as `upper(btrim(code))`, which equals the domain's canonical form for every
 * code but those with other whitespace or non-ASCII case mappings (see findCartWithLines). The ids are read through a
 * sub-select so that PostgreSQL keeps one generic plan: given the array itself, each execution's custom plan knows how
 * few ids it holds, looks cheaper than the generic plan, and is planned anew every time (measured with pgbench on one
 * id: 0.9 ms of planning per read, 1,035–1,486 reads/s against 3,568–4,807 with `= $1`; through the sub-select
 * 3,648–4,990). A line of an unpublished product reads without a price, as one no longer sold. Exported so that the benchmark replays it, with one id as a lone read sends it, as the read's ceiling.
 */
export const SESSION_READ = `with cart as (
  select ${CART_COLUMNS.join(', ')},
    array(select distinct upper(btrim(code)) from unnest(promo_codes) as code) as matched_codes
  from carts where id = any((select $1::text[])::text[])
)
select cart.*,
  (select coalesce(json_agg(json_build_object(
      'id', l.id, 'variant_id', l.variant_id, 'quantity', l.quantity, 'title', v.title, 'product_title', p.title,
      'price_amount', vp.amount, 'product_id', v.product_id, 'sku', v.sku, 'thumbnail', p.thumbnail
    ) order by l.position), '[]')
    from cart_line_items l
    left join variants v on v.id = l.variant_id
    left join products p on p.id = v.product_id
    left join variant_prices vp on vp.variant_id = l.variant_id and vp.region_id = cart.region_id and p.published
    where l.cart_id = cart.id) as lines,
  (select row_to_json(region) from (select ${REGION_COLUMNS.join(', ')} from regions where id = cart.region_id) as region) as region,
  (select coalesce(json_agg(promotion), '[]') from promotions as promotion
    where promotion.code = any(cart.matched_codes)) as promotions,
  case when cart.status = 'completed' then (
    select json_build_object('order', to_json(o), 'lines', (
      select coalesce(json_agg(ol order by ol.position), '[]') from order_line_items as ol where ol.order_id = o.id))
    from orders as o where o.session_id = cart.id
  ) end as "order"
from cart`;

interface SessionReadRow extends CartRow {
  matched_codes: string[];
  lines: CartLineRow[];
  region: RegionRow | null;
  promotions: PromotionRow[];
  order: { order: JsonDates<OrderRow>; lines: OrderLineRow[] } | null;
}

/** A row as JSON carries its timestamps as text. */
type JsonDates<Row> = { [Key in keyof Row]: Row[Key] extends Date ? string : Row[Key] };

function orderOf(json: NonNullable<SessionReadRow['order']>): OrderWithLines {
  const { order, lines } = json;
  return { order: { ...order, created_at: new Date(order.created_at), updated_at: new Date(order.updated_at) }, lines };
}

/**
 * Session reads outside a transaction are batched per database as cart inserts are (see src/db/batching.ts): a lone
 * read goes at once; while two read statements run, further reads queue, and the next statement reads them all (at
 * most 32). PostgreSQL runs one statement, one round trip, for the lot.
 */
const readSession = readByKey<SessionReadRow>({
  name: 'session_read',
  sql: SESSION_READ,
  keyOf: (row) => row.id,
  maxBatch: 32,
  maxInFlight: 2,
});

/**
 * A cart with everything it is presented from (see SESSION_READ), in one statement: inside a transaction on the
 * transaction's connection, otherwise in a statement that may read other requests' sessions too (always one that
 * starts after this call, so it sees every write committed before).
 */
export async function findCartWithLines(db: Db, id: string): Promise<StoredSession | undefined> {
  const row = await readSession(db, id);
  if (!row) return undefined;
  const { matched_codes: matched, lines, region, promotions, order, ...cart } = row;
  const canonical = canonicalCodes(cart.promo_codes);
  // Where the database's canonical form differs from the domain's (a tab around a code, say), ask again by the
  // domain's: a second statement for such carts only, never a different answer.
  const sameCodes = matched.length === canonical.length && [...matched].sort().every((c, i) => c === canonical[i]);
  return {
    cart,
    lines,
    region: region ?? undefined,
    promotions: sameCodes ? promotionsOf(promotions) : await findPromotions(db, canonical),
    order: order ? orderOf(order) : undefined,
  };
}

/** A checkout session's cart, locked until the transaction ends, so changes to one session happen one at a time. */
export async function findCartForUpdate(db: Db, id: string): Promise<CartRow | undefined> {
  return (await asPrepared('find_cart_for_update', db('carts').where({ id }).forUpdate().first())) as
    CartRow | undefined;
}

/** The fields of a session the protocol bindings change (always with `updated_at`). */
export type CartChange = Partial<
  Pick<
    CartRow,
    | 'status'
    | 'buyer_email'
    | 'buyer_details'
    | 'fulfillment_details'
    | 'promo_codes'
    | 'canceled_at'
    | 'shipping_address'
    | 'shipping_option'
  >
> & { updated_at: Date };

export async function updateCart(db: Db, id: string, change: CartChange): Promise<void> {
  await db('carts').where({ id }).update(withJsonColumns(change));
}

/** Replaces every line of a cart (full replacement; kept lines keep their id). */
export async function replaceLines(db: Db, cartId: string, lines: NewLine[]): Promise<void> {
  await db('cart_line_items').where({ cart_id: cartId }).delete();
  if (lines.length)
    await db('cart_line_items').insert(lines.map((line, position) => ({ ...line, cart_id: cartId, position })));
}

/** Cancels a checkout session once: a second cancel changes nothing (the WHERE keeps the first cancellation time). */
export async function cancelSession(db: Db, id: string, at: Date): Promise<void> {
  await db('carts')
    .where({ id, status: 'ready_for_payment' })
    .update({ status: 'canceled', canceled_at: at, updated_at: at });
}

// Agent carts: an OAuth client's `open` cart, changed line by line until it becomes a checkout session.

/** The client's cart; with `forUpdate`, locked until the transaction ends so changes to one cart happen one at a time. */
export async function findClientCart(
  db: Db,
  id: string,
  clientId: string,
  options: { forUpdate?: boolean } = {},
): Promise<CartRow | undefined> {
  const query = db('carts').where({ id, client_id: clientId }).first();
  return (await (options.forUpdate ? query.forUpdate() : query)) as CartRow | undefined;
}

export interface StoredLine extends NewLine {
  position: number;
}

/** The stored lines of a cart, without prices, in position order. */
export async function listLineRows(db: Db, cartId: string): Promise<StoredLine[]> {
  return db('cart_line_items')
    .where({ cart_id: cartId })
    .orderBy('position')
    .select('id', 'variant_id', 'quantity', 'position');
}

export async function insertLine(db: Db, cartId: string, line: NewLine, position: number): Promise<void> {
  await db('cart_line_items').insert({ ...line, cart_id: cartId, position });
}

export async function setLineQuantity(db: Db, lineId: string, quantity: number): Promise<void> {
  await db('cart_line_items').where({ id: lineId }).update({ quantity });
}

export async function deleteLine(db: Db, lineId: string): Promise<void> {
  await db('cart_line_items').where({ id: lineId }).delete();
}

/** Deletes an open cart and its lines (a cancelled UCP cart: UCP carts exist or not). */
export async function deleteOpenCart(db: Db, id: string): Promise<void> {
  await db('cart_line_items').where({ cart_id: id }).delete();
  await db('carts').where({ id, status: 'open' }).delete();
}

/** Records a change to a cart: its lines changed (no `status`), or it moved to a new status. */
export async function touchCart(db: Db, id: string, at: Date, status?: CartStatus): Promise<void> {
  await db('carts')
    .where({ id })
    .update({ updated_at: at, ...(status === undefined ? {} : { status }) });
}
