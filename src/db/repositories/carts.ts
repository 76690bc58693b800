// Carts and their line items (a checkout session is a cart).
import type { Knex } from 'knex';
import { groupCommit } from '../group-commit.js';
import { asPrepared, FAIL_FAST_MS, isDatabaseUnavailable, type Db } from '../knex.js';
import { COMPLETE_RECORD, completeRecordBindings, type KeyAnswer } from './idempotency.js';

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

function withJsonColumns<T extends Partial<CartRow>>(row: T): T {
  return {
    ...row,
    ...('buyer_details' in row ? { buyer_details: jsonText(row.buyer_details) } : {}),
    ...('fulfillment_details' in row ? { fulfillment_details: jsonText(row.fulfillment_details) } : {}),
  };
}

/** A new cart and its lines, as data-modifying CTEs: they commit or fail together, in one round trip. */
const NEW_CART_AND_LINES = `with new_cart as (
  insert into carts (id, region_id, status, buyer_email, promo_codes, client_id, created_at, updated_at,
                     buyer_details, fulfillment_details)
  values (?, ?, ?, ?, ?::text[], ?, ?, ?, ?::jsonb, ?::jsonb)
), new_lines as (
  insert into cart_line_items (id, cart_id, variant_id, quantity, position)
  select line.id, ?, line.variant_id, line.quantity, line.position - 1
  from unnest(?::text[], ?::text[], ?::int[]) with ordinality as line (id, variant_id, quantity, position)
)`;

/** The same, completing the key's in-flight record with its answer in the same statement. */
const NEW_CART_AND_LINES_ANSWERING_KEY = `${NEW_CART_AND_LINES}, key_answer as (
  ${COMPLETE_RECORD}
)`;

type NewCartRow = Omit<CartRow, 'canceled_at' | 'completed_at'>;

interface CartToStore {
  cart: NewCartRow;
  lines: NewLine[];
  answer: KeyAnswer | undefined;
}

/** One cart, its lines and (under an Idempotency-Key) its key's answer, in one statement of fixed text. */
async function insertOneCart(db: Db, { cart, lines, answer }: CartToStore): Promise<void> {
  const bindings: Knex.RawBinding[] = [
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
    cart.id,
    lines.map((line) => line.id),
    lines.map((line) => line.variant_id),
    lines.map((line) => line.quantity),
  ];
  const statement = answer
    ? asPrepared(
        'insert_cart_answering_key',
        db.raw(`${NEW_CART_AND_LINES_ANSWERING_KEY} select 1 as stored`, [
          ...bindings,
          ...completeRecordBindings(answer),
        ]),
      )
    : asPrepared('insert_cart', db.raw(`${NEW_CART_AND_LINES} select 1 as stored`, bindings));
  await statement;
}

/**
 * Many carts, their lines and their keys' answers in one statement: three JSON arrays of records, so the text stays
 * the same whatever the batch holds (one plan per connection). Each key's record is completed as COMPLETE_RECORD does.
 */
const NEW_CARTS_LINES_AND_ANSWERS = `with new_carts as (
  insert into carts (id, region_id, status, buyer_email, promo_codes, client_id, created_at, updated_at,
                     buyer_details, fulfillment_details)
  select id, region_id, status, buyer_email, promo_codes, client_id, created_at, updated_at,
         buyer_details, fulfillment_details
  from jsonb_to_recordset(?::jsonb) as cart (id text, region_id text, status text, buyer_email text,
    promo_codes text[], client_id text, created_at timestamptz, updated_at timestamptz, buyer_details jsonb,
    fulfillment_details jsonb)
), new_lines as (
  insert into cart_line_items (id, cart_id, variant_id, quantity, position)
  select id, cart_id, variant_id, quantity, position
  from jsonb_to_recordset(?::jsonb) as line (id text, cart_id text, variant_id text, quantity int, position int)
), key_answers as (
  update idempotency_keys as record
  set state = 'completed', status_code = answer.status, response_body = answer.body,
      api_version = answer.api_version, expires_at = answer.expires_at
  from jsonb_to_recordset(?::jsonb) as answer (scope text, key text, status int, body jsonb, api_version text,
    expires_at timestamptz)
  where record.scope = answer.scope and record.key = answer.key and record.state = 'in_flight'
) select 1 as stored`;

async function insertManyCarts(db: Db, batch: CartToStore[]): Promise<void> {
  const cartRecords = batch.map(({ cart }) => ({
    ...cart,
    buyer_details: cart.buyer_details ?? null,
    fulfillment_details: cart.fulfillment_details ?? null,
  }));
  const lineRecords = batch.flatMap(({ cart, lines }) =>
    lines.map((line, position) => ({ ...line, cart_id: cart.id, position })),
  );
  const answers = batch.flatMap(({ answer }) =>
    answer
      ? [
          {
            scope: answer.scope,
            key: answer.key,
            status: answer.status,
            body: answer.body,
            api_version: answer.apiVersion,
            expires_at: answer.expiresAt,
          },
        ]
      : [],
  );
  await asPrepared(
    'insert_carts',
    db.raw(NEW_CARTS_LINES_AND_ANSWERS, [
      JSON.stringify(cartRecords),
      JSON.stringify(lineRecords),
      JSON.stringify(answers),
    ]),
  );
}

/**
 * Cart inserts outside a transaction go through one group commit per database (see src/db/group-commit.ts): while
 * MAX_INSERTS_IN_FLIGHT statements run, further carts queue, and the next statement stores them all (at most
 * MAX_CARTS_PER_STATEMENT). PostgreSQL pays one commit and one statement for the lot instead of one each.
 */
const MAX_INSERTS_IN_FLIGHT = 2;
const MAX_CARTS_PER_STATEMENT = 16;
const cartStores = new WeakMap<Db, (toStore: CartToStore) => Promise<void>>();

function cartStore(db: Db): (toStore: CartToStore) => Promise<void> {
  let store = cartStores.get(db);
  if (!store) {
    store = groupCommit<CartToStore>({
      one: (toStore) => insertOneCart(db, toStore),
      many: (batch) => insertManyCarts(db, batch),
      maxBatch: MAX_CARTS_PER_STATEMENT,
      maxInFlight: MAX_INSERTS_IN_FLIGHT,
      queueTimeoutMs: FAIL_FAST_MS,
      sharedFailure: isDatabaseUnavailable,
    });
    cartStores.set(db, store);
  }
  return store;
}

/**
 * Stores a cart and its lines in a single statement (instead of a transaction's four or five round trips), with a
 * fixed text whatever the number of lines, so that PostgreSQL plans it once per connection. Under an Idempotency-Key,
 * the same statement completes the key's record with its `answer`, so a stored answer always describes a stored cart.
 * Resolves once committed. Outside a transaction the statement may carry other requests' carts too (group commit);
 * a batch that fails is retried cart by cart, so each request gets the outcome and the error it would get alone.
 */
export async function insertCart(db: Db, cart: NewCartRow, lines: NewLine[], answer?: KeyAnswer): Promise<void> {
  const toStore = { cart, lines, answer };
  await (db.isTransaction ? insertOneCart(db, toStore) : cartStore(db)(toStore));
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
] as const;

/** A cart and its lines, each with its variant's current title and price in the cart's region, in one query. */
export async function findCartWithLines(
  db: Db,
  id: string,
): Promise<{ cart: CartRow; lines: CartLineRow[] } | undefined> {
  const rows = await asPrepared('cart_with_lines', sessionWithLinesQuery(db, id));
  const [first] = rows;
  if (!first) return undefined;
  const cart = Object.fromEntries(CART_COLUMNS.map((column) => [column, first[column]])) as unknown as CartRow;
  const lines = rows
    .filter((row) => row.line_id !== null)
    .map((row): CartLineRow => ({
      id: row.line_id,
      variant_id: row.variant_id,
      quantity: row.quantity,
      title: row.title,
      product_title: row.product_title,
      price_amount: row.price_amount,
      product_id: row.product_id,
      sku: row.sku,
      thumbnail: row.thumbnail,
    }));
  return { cart, lines };
}

/** The one statement that reads a session (exported so the benchmark can replay it with pgbench as its ceiling). */
export function sessionWithLinesQuery(db: Db, id: string) {
  return db('carts as c')
    .leftJoin('cart_line_items as l', 'l.cart_id', 'c.id')
    .leftJoin('variants as v', 'v.id', 'l.variant_id')
    .leftJoin('products as p', 'p.id', 'v.product_id')
    .leftJoin('variant_prices as vp', function joinPrice() {
      this.on('vp.variant_id', 'l.variant_id').andOn('vp.region_id', 'c.region_id');
    })
    .where('c.id', id)
    .orderBy('l.position')
    .select(
      ...CART_COLUMNS.map((column) => `c.${column}`),
      {
        line_id: 'l.id',
        variant_id: 'l.variant_id',
        quantity: 'l.quantity',
        title: 'v.title',
        product_title: 'p.title',
        price_amount: 'vp.amount',
      },
      { product_id: 'v.product_id', sku: 'v.sku', thumbnail: 'p.thumbnail' },
    );
}

export async function listCartLines(db: Db, cart: Pick<CartRow, 'id'>): Promise<CartLineRow[]> {
  return (await findCartWithLines(db, cart.id))?.lines ?? [];
}

/** A checkout session's cart, locked until the transaction ends, so changes to one session happen one at a time. */
export async function findCartForUpdate(db: Db, id: string): Promise<CartRow | undefined> {
  return (await asPrepared('find_cart_for_update', db('carts').where({ id }).forUpdate().first())) as
    CartRow | undefined;
}

/** The fields of a session the protocol bindings change (always with `updated_at`). */
export type CartChange = Partial<
  Pick<CartRow, 'status' | 'buyer_email' | 'buyer_details' | 'fulfillment_details' | 'promo_codes' | 'canceled_at'>
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

/** Records a change to a cart: its lines changed (no `status`), or it moved to a new status. */
export async function touchCart(db: Db, id: string, at: Date, status?: CartStatus): Promise<void> {
  await db('carts')
    .where({ id })
    .update({ updated_at: at, ...(status === undefined ? {} : { status }) });
}
