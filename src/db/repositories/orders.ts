// Orders, their lines, processor events and processor checkouts.
import type { OrderStatus, Quote, ReviewReason, StockRow } from '../../domain/orders.js';
import { asPrepared, runPrepared, type Db } from '../knex.js';
import type { CartRow } from './carts.js';

export type Processor = 'stripe' | 'test';

export interface OrderRow {
  id: string;
  order_number: string;
  session_id: string;
  client_id: string | null;
  status: OrderStatus;
  review_reasons: ReviewReason[];
  region_id: string;
  currency: string;
  subtotal: number;
  discount: number;
  shipping: number;
  tax: number;
  total: number;
  amount_paid: number;
  paid_currency: string;
  amount_refunded: number;
  promo_codes: string[];
  buyer_email: string | null;
  processor: Processor;
  payment_reference: string;
  permalink_token: string;
  created_at: Date;
  updated_at: Date;
}

export interface OrderLineRow {
  id: string;
  order_id: string;
  position: number;
  variant_id: string;
  title: string;
  quantity: number;
  unit_amount: number;
  base_amount: number;
  discount: number;
  subtotal: number;
  tax: number;
  total: number;
}

export interface OrderWithLines {
  order: OrderRow;
  lines: OrderLineRow[];
}

/** Records a processor event once. False when it was already recorded (a redelivery): the caller does nothing more. */
export async function recordEvent(
  db: Db,
  processor: Processor,
  eventId: string,
  type: string,
  at: Date,
): Promise<boolean> {
  const inserted = await asPrepared(
    'record_processor_event',
    db('processor_events')
      .insert({ processor, event_id: eventId, type, received_at: at })
      .onConflict(['processor', 'event_id'])
      .ignore()
      .returning('event_id'),
  );
  return inserted.length > 0;
}

/**
 * The first statement of a payment's transaction, in PostgreSQL's own form (runPrepared): the event recorded, then,
 * only if it was new, the session locked, the quote sent to the processor under $6 read, and, only if the session can
 * still become an order, its variants locked in id order (those of $7, or else of the quote sent). Each step depends
 * on the one before (the locks are taken in the order the separate statements took them: session, then stock by id,
 * so concurrent orders sharing variants cannot deadlock), in one round trip instead of four. Stock is locked FOR NO KEY
 * UPDATE (see lockStock).
 */
const PAYMENT_CLAIM = `with event as (
  insert into processor_events (processor, event_id, type, received_at)
  values ($1, $2, $3, $4)
  on conflict (processor, event_id) do nothing
  returning event_id
), cart as (
  select id, status, client_id, buyer_email from carts
  where id = $5 and exists (select from event)
  for update
), sent as (
  select quote from processor_checkouts
  where processor = $1 and reference = $6 and session_id = $5 and exists (select from cart)
), stock as (
  select id, manage_inventory, allow_backorder, inventory_quantity from variants
  where id = any(coalesce($7::text[],
      array(select line->>'variantId' from sent, jsonb_array_elements(sent.quote->'lines') as line)))
    and exists (select from cart where status in ('ready_for_payment', 'canceled'))
  order by id
  for no key update
)
select exists (select from event) as recorded, cart.id, cart.status, cart.client_id, cart.buyer_email,
  (select quote from sent) as quote_sent,
  (select coalesce(json_agg(stock), '[]') from stock) as stock
from (values (1)) as one left join cart on true`;

export interface PaymentToClaim {
  processor: Processor;
  eventId: string;
  eventType: string;
  at: Date;
  sessionId: string;
  /** The processor's checkout the buyer paid through, whose stored quote is read. */
  checkoutReference: string | undefined;
  /** The variants to lock when the quote is known already (otherwise those of the quote sent). */
  variantIds: string[] | undefined;
}

export type PaymentClaim =
  /** The event was handled before: nothing was read or locked. */
  | { recorded: false }
  | {
      recorded: true;
      /** The session, locked until the transaction ends; undefined when there is none. */
      cart: Pick<CartRow, 'id' | 'status' | 'client_id' | 'buyer_email'> | undefined;
      /** The quote sent to the processor under `checkoutReference`, if there is one. */
      quoteSent: Quote | undefined;
      /** The variants locked (in a session that can still become an order). */
      stock: StockRow[];
    };

interface PaymentClaimRow {
  recorded: boolean;
  id: string | null;
  status: CartRow['status'] | null;
  client_id: string | null;
  buyer_email: string | null;
  quote_sent: Quote | null;
  stock: StockRow[];
}

/**
 * Records a processor event once and, if it is new, locks what its payment changes (PAYMENT_CLAIM). Inside the
 * payment's transaction: the locks last until it ends.
 */
export async function claimPayment(db: Db, payment: PaymentToClaim): Promise<PaymentClaim> {
  const [row] = await runPrepared<PaymentClaimRow>(db, 'claim_payment', PAYMENT_CLAIM, [
    payment.processor,
    payment.eventId,
    payment.eventType,
    payment.at,
    payment.sessionId,
    payment.checkoutReference ?? null,
    payment.variantIds ?? null,
  ]);
  if (!row!.recorded) return { recorded: false };
  const { id, status, client_id, buyer_email, quote_sent, stock } = row!;
  return {
    recorded: true,
    cart: id === null || status === null ? undefined : { id, status, client_id, buyer_email },
    quoteSent: quote_sent ?? undefined,
    stock,
  };
}

/**
 * Everything a paid order writes once its stock rows are locked, as data-modifying CTEs in one round trip (they
 * commit or fail together with the transaction): the stock left, the redemptions of its promotions, the order numbered
 * from the sequence, its lines, and its session completed. The text is fixed whatever the number of lines, stock
 * rows and codes (arrays travel as parameters), so PostgreSQL plans it once per connection.
 */
const PAID_ORDER = `with stock as (
  update variants v set inventory_quantity = s.quantity
  from unnest($1::text[], $2::int[]) as s (id, quantity)
  where v.id = s.id
), redemptions as (
  update promotions set times_redeemed = times_redeemed + 1 where code = any($3::text[])
), new_order as (
  insert into orders (id, order_number, session_id, client_id, status, review_reasons, region_id, currency, subtotal,
                      discount, shipping, tax, total, amount_paid, paid_currency, amount_refunded, promo_codes,
                      buyer_email, processor, payment_reference, permalink_token, created_at, updated_at)
  values ($4, $5 || nextval('order_numbers'), $6, $7, $8, $9::text[], $10, $11, $12, $13, $14, $15, $16, $17, $18,
          $19, $3::text[], $20, $21, $22, $23, $24, $25)
  returning order_number
), new_lines as (
  insert into order_line_items (id, order_id, position, variant_id, title, quantity, unit_amount, base_amount,
                                discount, subtotal, tax, total)
  select line.id, $4, line.position - 1, line.variant_id, line.title, line.quantity, line.unit_amount,
         line.base_amount, line.discount, line.subtotal, line.tax, line.total
  from unnest($26::text[], $27::text[], $28::text[], $29::int[], $30::bigint[], $31::bigint[], $32::bigint[],
              $33::bigint[], $34::bigint[], $35::bigint[])
       with ordinality as line (id, variant_id, title, quantity, unit_amount, base_amount, discount, subtotal, tax,
                                total, position)
), completed as (
  update carts set status = 'completed', completed_at = $25, updated_at = $25 where id = $6
)
select order_number from new_order`;

export interface PaidOrder {
  /** The order as stored, but for its number, which the sequence gives. */
  order: Omit<OrderRow, 'order_number'>;
  /** Put before the sequence's number (`SF-` makes SF-1001). */
  numberPrefix: string;
  quote: Quote;
  stock: Array<{ id: string; inventoryQuantity: number }>;
}

/**
 * Stores a paid order and everything it changes in one statement (PAID_ORDER); answers its order number. Sent as
 * written (runPrepared), not through Knex's query builder, whose raw formatting of forty-odd bindings over this text
 * and its runner cost more CPU than the rest of the order's JavaScript.
 */
export async function insertPaidOrder(db: Db, paid: PaidOrder): Promise<string> {
  const { order, quote } = paid;
  const lines = quote.lines;
  const column = <K extends keyof (typeof lines)[number]>(key: K) => lines.map((line) => line[key]);
  const [row] = await runPrepared<{ order_number: string }>(db, 'insert_paid_order', PAID_ORDER, [
    paid.stock.map((update) => update.id),
    paid.stock.map((update) => update.inventoryQuantity),
    order.promo_codes,
    order.id,
    paid.numberPrefix,
    order.session_id,
    order.client_id,
    order.status,
    order.review_reasons,
    order.region_id,
    order.currency,
    order.subtotal,
    order.discount,
    order.shipping,
    order.tax,
    order.total,
    order.amount_paid,
    order.paid_currency,
    order.amount_refunded,
    order.buyer_email,
    order.processor,
    order.payment_reference,
    order.permalink_token,
    order.created_at,
    order.updated_at,
    column('id'),
    column('variantId'),
    column('title'),
    column('quantity'),
    column('unitAmount'),
    column('baseAmount'),
    column('discount'),
    column('subtotal'),
    column('tax'),
    column('total'),
  ]);
  return row!.order_number;
}

async function withLines(db: Db, order: OrderRow | undefined): Promise<OrderWithLines | undefined> {
  if (!order) return undefined;
  const lines = (await db('order_line_items').where({ order_id: order.id }).orderBy('position')) as OrderLineRow[];
  return { order, lines };
}

export async function findOrderBySession(db: Db, sessionId: string): Promise<OrderWithLines | undefined> {
  return withLines(db, (await db('orders').where({ session_id: sessionId }).first()) as OrderRow | undefined);
}

export async function findOrderByToken(db: Db, token: string): Promise<OrderWithLines | undefined> {
  return withLines(db, (await db('orders').where({ permalink_token: token }).first()) as OrderRow | undefined);
}

export async function findClientOrder(db: Db, id: string, clientId: string): Promise<OrderWithLines | undefined> {
  return withLines(db, (await db('orders').where({ id, client_id: clientId }).first()) as OrderRow | undefined);
}

/** The order paid through `reference`, locked until the transaction ends (refunds of one payment apply one at a time). */
export async function lockOrderByPayment(
  db: Db,
  processor: Processor,
  reference: string,
): Promise<OrderRow | undefined> {
  return (await db('orders').where({ processor, payment_reference: reference }).forUpdate().first()) as
    OrderRow | undefined;
}

export async function updateOrder(
  db: Db,
  id: string,
  changes: Partial<Pick<OrderRow, 'status' | 'amount_refunded' | 'updated_at'>>,
): Promise<OrderRow> {
  const [row] = (await db('orders').where({ id }).update(changes).returning('*')) as OrderRow[];
  return row!;
}

/**
 * The variants of a paid order, locked in id order (so concurrent orders sharing variants cannot deadlock) and FOR NO
 * KEY UPDATE: the order changes their stock, never their key, and a create storing lines holds a FOR KEY SHARE lock on
 * each line's variant (its foreign key), in the order of its items; FOR UPDATE would wait for those, and deadlock with a
 * create holding the order's variants the other way round.
 */
export async function lockStock(db: Db, variantIds: string[]): Promise<StockRow[]> {
  return (await asPrepared(
    'lock_stock',
    db('variants')
      .where('id', '=', db.raw('any(?::text[])', [[...new Set(variantIds)].sort()]))
      .orderBy('id')
      .forNoKeyUpdate()
      .select('id', 'manage_inventory', 'allow_backorder', 'inventory_quantity'),
  )) as StockRow[];
}

export interface ProcessorCheckoutRow {
  session_id: string;
  processor: Processor;
  quote_hash: string;
  quote: Quote;
  reference: string;
  url: string;
  expires_at: Date;
  created_at: Date;
}

/** The session's latest checkout at the processor. */
export async function latestProcessorCheckout(
  db: Db,
  processor: Processor,
  sessionId: string,
): Promise<ProcessorCheckoutRow | undefined> {
  return (await db('processor_checkouts')
    .where({ processor, session_id: sessionId })
    .orderBy('created_at', 'desc')
    .first()) as ProcessorCheckoutRow | undefined;
}

export async function saveProcessorCheckout(db: Db, row: ProcessorCheckoutRow): Promise<void> {
  await db('processor_checkouts').insert({ ...row, quote: JSON.stringify(row.quote) });
}
