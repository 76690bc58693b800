// Orders, their lines, processor events and processor checkouts.
import type { OrderStatus, Quote, ReviewReason, StockRow } from '../../domain/orders.js';
import type { Db } from '../knex.js';

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
  const inserted = await db('processor_events')
    .insert({ processor, event_id: eventId, type, received_at: at })
    .onConflict(['processor', 'event_id'])
    .ignore()
    .returning('event_id');
  return inserted.length > 0;
}

export async function nextOrderNumber(db: Db): Promise<number> {
  const { rows } = (await db.raw(`select nextval('order_numbers') as n`)) as { rows: Array<{ n: number }> };
  return Number(rows[0]!.n);
}

export async function insertOrder(db: Db, order: OrderRow, quote: Quote): Promise<void> {
  await db('orders').insert(order);
  await db('order_line_items').insert(
    quote.lines.map((line, position) => ({
      id: line.id,
      order_id: order.id,
      position,
      variant_id: line.variantId,
      title: line.title,
      quantity: line.quantity,
      unit_amount: line.unitAmount,
      base_amount: line.baseAmount,
      discount: line.discount,
      subtotal: line.subtotal,
      tax: line.tax,
      total: line.total,
    })),
  );
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

/** The variants of a paid order, locked in id order (so concurrent orders sharing variants cannot deadlock). */
export async function lockStock(db: Db, variantIds: string[]): Promise<StockRow[]> {
  return (await db('variants')
    .whereIn('id', [...new Set(variantIds)].sort())
    .orderBy('id')
    .forUpdate()
    .select('id', 'manage_inventory', 'allow_backorder', 'inventory_quantity')) as StockRow[];
}

export async function setStock(db: Db, updates: Array<{ id: string; inventoryQuantity: number }>): Promise<void> {
  for (const update of updates)
    await db('variants').where({ id: update.id }).update({ inventory_quantity: update.inventoryQuantity });
}

export async function countRedemptions(db: Db, codes: string[]): Promise<void> {
  if (codes.length) await db('promotions').whereIn('code', codes).increment('times_redeemed', 1);
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

/** The quote the processor was asked to charge under `reference` for this session. */
export async function findQuoteSent(
  db: Db,
  processor: Processor,
  sessionId: string,
  reference: string,
): Promise<Quote | undefined> {
  const row = (await db('processor_checkouts')
    .where({ processor, session_id: sessionId, reference })
    .first('quote')) as { quote: Quote } | undefined;
  return row?.quote;
}

export async function saveProcessorCheckout(db: Db, row: ProcessorCheckoutRow): Promise<void> {
  await db('processor_checkouts').insert({ ...row, quote: JSON.stringify(row.quote) });
}
