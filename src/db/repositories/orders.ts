// Orders and their lines: the queries of the order a session became, and the changes refunds make to it.
import type { FulfilmentStatus } from '../../domain/order-states.js';
import type { OrderStatus, QuoteFulfilment, ReviewReason } from '../../domain/orders.js';
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
  /** The destination, option and tax by jurisdiction charged (migration 011); null for a session priced as an estimate. */
  fulfilment?: QuoteFulfilment | null;
  /** How far the merchant shipped it (migration 013; every stored row has it, a row being built not yet). */
  fulfilment_status?: FulfilmentStatus;
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
