// The merchant's reads and changes of orders (issue #35): the order list, an order's shipments, refunds and history,
// and what a shipment, a delivery, a cancellation or a refund writes; the audit trail of every admin change.
import type { FulfilmentStatus } from '../../domain/order-states.js';
import type { OrderStatus } from '../../domain/orders.js';
import type { Knex } from 'knex';
import type { Db } from '../knex.js';
import type { OrderRow } from './orders.js';

export type AdminOrderRow = OrderRow & { fulfilment_status: FulfilmentStatus; canceled_at: Date | null };

export interface LineQuantity {
  line_id: string;
  quantity: number;
}

export interface ShipmentRow {
  id: string;
  order_id: string;
  carrier: string;
  tracking_number: string;
  tracking_url: string | null;
  lines: LineQuantity[];
  shipped_at: Date;
  delivered_at: Date | null;
}

export interface RefundRow {
  id: string;
  order_id: string;
  amount: number;
  currency: string;
  reason: string | null;
  restocked: boolean;
  lines: LineQuantity[];
  processor: string;
  processor_reference: string | null;
  created_at: Date;
}

export interface AuditRow {
  id: string;
  client_id: string;
  operation: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  created_at: Date;
}

/** What a page of a newest-first list is cut by: a creation range and the last row of the previous page. */
export interface NewestFirstPage {
  createdFrom?: Date;
  createdBefore?: Date;
  /** The last row of the previous page (newest first). */
  after?: { createdAt: Date; id: string };
  limit: number;
}

/** `query` newest first (ties by id) within the range and after the cursor, one more than `limit` rows. */
function newestFirstPage<Q extends Knex.QueryBuilder>(query: Q, page: NewestFirstPage): Q {
  if (page.createdFrom) query.where('created_at', '>=', page.createdFrom);
  if (page.createdBefore) query.where('created_at', '<', page.createdBefore);
  const after = page.after;
  if (after)
    query.where((older) =>
      older
        .where('created_at', '<', after.createdAt)
        .orWhere((same) => same.where('created_at', '=', after.createdAt).andWhere('id', '<', after.id)),
    );
  return query
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(page.limit + 1) as Q;
}

export interface OrderFilters extends NewestFirstPage {
  status?: OrderStatus[];
  fulfilment?: FulfilmentStatus[];
}

/** Orders newest first (ties by id), one more than `limit` so the caller knows whether a next page exists. */
export async function listOrders(db: Db, filters: OrderFilters): Promise<AdminOrderRow[]> {
  const query = db<AdminOrderRow>('orders');
  if (filters.status?.length) query.whereIn('status', filters.status);
  if (filters.fulfilment?.length) query.whereIn('fulfilment_status', filters.fulfilment);
  return (await newestFirstPage(query, filters)) as AdminOrderRow[];
}

export async function findOrder(db: Db, id: string): Promise<AdminOrderRow | undefined> {
  return (await db('orders').where({ id }).first()) as AdminOrderRow | undefined;
}

/** The order, locked until the transaction ends: admin changes and refund events of one order apply one at a time. */
export async function lockOrder(db: Db, id: string): Promise<AdminOrderRow | undefined> {
  return (await db('orders').where({ id }).forUpdate().first()) as AdminOrderRow | undefined;
}

export async function updateOrder(
  db: Db,
  id: string,
  changes: Partial<
    Pick<AdminOrderRow, 'status' | 'fulfilment_status' | 'amount_refunded' | 'canceled_at' | 'updated_at'>
  >,
): Promise<AdminOrderRow> {
  const [row] = (await db('orders').where({ id }).update(changes).returning('*')) as AdminOrderRow[];
  return row!;
}

export async function shipmentsOf(db: Db, orderId: string): Promise<ShipmentRow[]> {
  return (await db('order_shipments').where({ order_id: orderId }).orderBy(['shipped_at', 'id'])) as ShipmentRow[];
}

export async function refundsOf(db: Db, orderId: string): Promise<RefundRow[]> {
  return (await db('order_refunds').where({ order_id: orderId }).orderBy(['created_at', 'id'])) as RefundRow[];
}

export async function insertShipment(db: Db, row: ShipmentRow): Promise<void> {
  await db('order_shipments').insert({ ...row, lines: JSON.stringify(row.lines) });
}

export async function markShipmentsDelivered(db: Db, orderId: string, at: Date): Promise<void> {
  await db('order_shipments').where({ order_id: orderId }).whereNull('delivered_at').update({ delivered_at: at });
}

export async function insertRefund(db: Db, row: RefundRow): Promise<void> {
  await db('order_refunds').insert({ ...row, lines: JSON.stringify(row.lines) });
}

/**
 * Puts units back on the shelf, for the variants whose stock is kept: one statement, so atomic under orders (a variant
 * on several lines gets their sum).
 */
export async function restock(db: Db, units: Array<{ variantId: string; quantity: number }>): Promise<void> {
  const totals = new Map<string, number>();
  for (const { variantId, quantity } of units)
    if (quantity > 0) totals.set(variantId, (totals.get(variantId) ?? 0) + quantity);
  if (!totals.size) return;
  await db.raw(
    `update variants set inventory_quantity = inventory_quantity + returned.quantity
       from unnest(?::text[], ?::integer[]) as returned(variant_id, quantity)
      where variants.id = returned.variant_id and variants.manage_inventory`,
    [[...totals.keys()], [...totals.values()]],
  );
}

/** Gives back one use of each promotion code (the order's redemption), never below zero. */
export async function releaseRedemptions(db: Db, codes: string[]): Promise<void> {
  if (!codes.length) return;
  await db('promotions')
    .whereIn('code', codes)
    .update({ times_redeemed: db.raw('greatest(times_redeemed - 1, 0)') });
}

export async function insertAudit(db: Db, row: AuditRow): Promise<void> {
  await db('audit_events').insert({
    ...row,
    before: row.before === undefined ? null : JSON.stringify(row.before),
    after: row.after === undefined ? null : JSON.stringify(row.after),
  });
}

export interface AuditFilters extends NewestFirstPage {
  clientId?: string;
  operation?: string;
  targetType?: string;
  targetId?: string;
}

/** Audit events newest first, one more than `limit`. */
export async function listAudit(db: Db, filters: AuditFilters): Promise<AuditRow[]> {
  const query = db<AuditRow>('audit_events');
  if (filters.clientId) query.where('client_id', filters.clientId);
  if (filters.operation) query.where('operation', filters.operation);
  if (filters.targetType) query.where('target_type', filters.targetType);
  if (filters.targetId) query.where('target_id', filters.targetId);
  return (await newestFirstPage(query, filters)) as AuditRow[];
}

// The merchant's catalogue changes (admin:catalog).

export interface VariantStockRow {
  id: string;
  manage_inventory: boolean;
  allow_backorder: boolean;
  inventory_quantity: number;
}

export async function lockVariant(db: Db, id: string): Promise<VariantStockRow | undefined> {
  return (await db('variants')
    .where({ id })
    .forUpdate()
    .first('id', 'manage_inventory', 'allow_backorder', 'inventory_quantity')) as VariantStockRow | undefined;
}

/**
 * Sets the stock, or adds `adjustment` to it, in one statement that never takes a kept variant below zero: undefined
 * when it would (nothing is written).
 */
export async function changeStock(
  db: Db,
  id: string,
  change: { quantity: number } | { adjustment: number },
): Promise<VariantStockRow | undefined> {
  const next =
    'quantity' in change
      ? db.raw('?::int', [change.quantity])
      : db.raw('inventory_quantity + ?::int', [change.adjustment]);
  const [row] = (await db('variants')
    .where({ id })
    .andWhere((guard) => guard.where('manage_inventory', false).orWhereRaw('? >= 0', [next]))
    .update({ inventory_quantity: next })
    .returning(['id', 'manage_inventory', 'allow_backorder', 'inventory_quantity'])) as VariantStockRow[];
  return row;
}

export interface VariantPriceRow {
  region_id: string;
  amount: number;
  currency: string;
}

export async function pricesOf(db: Db, variantId: string): Promise<VariantPriceRow[]> {
  return (await db('variant_prices as p')
    .join('regions as r', 'r.id', 'p.region_id')
    .where('p.variant_id', variantId)
    .orderBy('p.region_id')
    .select('p.region_id', 'p.amount', 'r.currency_code as currency')) as VariantPriceRow[];
}

export async function knownRegions(db: Db, ids: string[]): Promise<string[]> {
  return ((await db('regions').whereIn('id', ids).select('id')) as Array<{ id: string }>).map((row) => row.id);
}

export async function upsertPrices(db: Db, variantId: string, prices: Array<{ region_id: string; amount: number }>) {
  await db('variant_prices')
    .insert(prices.map((price) => ({ variant_id: variantId, ...price })))
    .onConflict(['variant_id', 'region_id'])
    .merge(['amount']);
}
