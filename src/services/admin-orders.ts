// The merchant's order operations (issue #35): list and read any order; record a shipment, a delivery, a cancellation
// or a refund. Each change runs in one transaction under its Idempotency-Key (claim-first, adminKeys): the order row
// locked, the transition checked by the state machine (src/domain/order-states.ts), the change and its audit event
// written, and the agent whose cart it was told through the outbox (`order.updated`), all or nothing. A refused
// request throws before anything is stored, so it records nothing and leaves its key free.
import type { components } from '../../codegen/types.js';
import * as repo from '../db/repositories/admin-orders.js';
import type { AdminOrderRow, LineQuantity } from '../db/repositories/admin-orders.js';
import type { Db } from '../db/knex.js';
import type { OrderLineRow } from '../db/repositories/orders.js';
import type { Deps } from '../deps.js';
import { BadRequest, NotFound, ProcessorUnavailable } from '../domain/errors.js';
export type { AdminCall } from './admin-changes.js';
import { transition, type FulfilmentStatus, type OrderTransition } from '../domain/order-states.js';
import type { OrderHappening } from '../domain/order-events.js';
import type { OrderStatus } from '../domain/orders.js';
import { runAdminChange, type AdminCall } from './admin-changes.js';
import { tellAgent } from './orders.js';

type Schemas = components['schemas'];
export type AdminOrder = Schemas['AdminOrder'];
export type AuditEvent = Schemas['AuditEvent'];

const PAGE = 20;
/** How long the processor may take to refund before the change gives up (nothing is stored then). */
const REFUND_TIMEOUT_MS = 10_000;

function badRequest(message: string, param: string): BadRequest {
  return new BadRequest('invalid_request', message, { param });
}

function noOrder(id: string): NotFound {
  return new NotFound(`No order with id ${id}.`, { param: 'id' });
}

// Cursors: the last item of a page (its creation time and id), base64url JSON.
function cursorOf(row: { created_at: Date; id: string }): string {
  return Buffer.from(JSON.stringify([new Date(row.created_at).toISOString(), row.id])).toString('base64url');
}

function readCursor(cursor: string | undefined): { createdAt: Date; id: string } | undefined {
  if (cursor === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string'
    ) {
      const createdAt = new Date(parsed[0]);
      if (!Number.isNaN(createdAt.getTime())) return { createdAt, id: parsed[1] };
    }
  } catch {
    // answered below
  }
  throw badRequest('The cursor is not one this API gave; pass a next_cursor unchanged.', 'cursor');
}

function dateParam(value: string | undefined, param: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw badRequest(`${param} is not a date-time.`, param);
  return date;
}

function page<Row extends { created_at: Date; id: string }>(rows: Row[], limit: number) {
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  return { rows: shown, next: more ? cursorOf(shown[shown.length - 1]!) : null };
}

const iso = (date: Date | null) => (date === null ? null : new Date(date).toISOString());

function auditView(row: repo.AuditRow): AuditEvent {
  return {
    id: row.id,
    client_id: row.client_id,
    operation: row.operation,
    target_type: row.target_type as AuditEvent['target_type'],
    target_id: row.target_id,
    before: (row.before ?? null) as AuditEvent['before'],
    after: (row.after ?? null) as AuditEvent['after'],
    created_at: new Date(row.created_at).toISOString(),
  };
}

function summaryView(order: AdminOrderRow): Schemas['AdminOrderSummary'] {
  return {
    id: order.id,
    order_number: order.order_number,
    status: order.status,
    fulfilment_status: order.fulfilment_status,
    currency: order.currency,
    total: order.total,
    amount_paid: order.amount_paid,
    amount_refunded: order.amount_refunded,
    processor: order.processor,
    client_id: order.client_id,
    created_at: new Date(order.created_at).toISOString(),
    updated_at: new Date(order.updated_at).toISOString(),
  };
}

/** Units of each line in `rows` (shipments or refunds). */
function unitsByLine(rows: Array<{ lines: LineQuantity[] }>): Map<string, number> {
  const units = new Map<string, number>();
  for (const row of rows)
    for (const line of row.lines) units.set(line.line_id, (units.get(line.line_id) ?? 0) + line.quantity);
  return units;
}

async function linesOf(db: Db, orderId: string): Promise<OrderLineRow[]> {
  return (await db('order_line_items').where({ order_id: orderId }).orderBy('position')) as OrderLineRow[];
}

async function orderView(db: Db, order: AdminOrderRow): Promise<AdminOrder> {
  const [lines, shipments, refunds, history] = [
    await linesOf(db, order.id),
    await repo.shipmentsOf(db, order.id),
    await repo.refundsOf(db, order.id),
    await repo.listAudit(db, { targetType: 'order', targetId: order.id, limit: 1000 }),
  ];
  const shipped = unitsByLine(shipments);
  const restocked = unitsByLine(refunds.filter((refund) => refund.restocked));
  return {
    id: order.id,
    order_number: order.order_number,
    status: order.status,
    fulfilment_status: order.fulfilment_status,
    review_reasons: order.review_reasons,
    currency: order.currency,
    totals: {
      subtotal: order.subtotal,
      discount: order.discount,
      shipping: order.shipping,
      tax: order.tax,
      total: order.total,
    },
    line_items: lines.map((line) => ({
      id: line.id,
      variant_id: line.variant_id,
      title: line.title,
      quantity: line.quantity,
      unit_amount: line.unit_amount,
      total: line.total,
      quantity_shipped: shipped.get(line.id) ?? 0,
      quantity_restocked: restocked.get(line.id) ?? 0,
    })),
    payments: [
      {
        processor: order.processor,
        reference: order.payment_reference,
        amount: order.amount_paid,
        currency: order.paid_currency,
        amount_refunded: order.amount_refunded,
      },
    ],
    refunds: refunds.map((refund) => ({
      id: refund.id,
      amount: refund.amount,
      currency: refund.currency,
      reason: refund.reason,
      restocked: refund.restocked,
      line_items: refund.lines,
      processor_reference: refund.processor_reference,
      created_at: new Date(refund.created_at).toISOString(),
    })),
    shipments: shipments.map((shipment) => ({
      id: shipment.id,
      carrier: shipment.carrier,
      tracking_number: shipment.tracking_number,
      tracking_url: shipment.tracking_url,
      line_items: shipment.lines,
      shipped_at: new Date(shipment.shipped_at).toISOString(),
      delivered_at: iso(shipment.delivered_at),
    })),
    history: history.reverse().map(auditView),
    promo_codes: order.promo_codes,
    client_id: order.client_id,
    buyer_email: order.buyer_email,
    created_at: new Date(order.created_at).toISOString(),
    updated_at: new Date(order.updated_at).toISOString(),
  };
}

export interface OrderListQuery {
  status?: OrderStatus[];
  fulfilment_status?: FulfilmentStatus[];
  created_from?: string;
  created_before?: string;
  cursor?: string;
  limit?: number;
}

export async function listAdminOrders(deps: Deps, query: OrderListQuery) {
  const limit = query.limit ?? PAGE;
  const rows = await repo.listOrders(deps.db, {
    status: query.status,
    fulfilment: query.fulfilment_status,
    createdFrom: dateParam(query.created_from, 'created_from'),
    createdBefore: dateParam(query.created_before, 'created_before'),
    after: readCursor(query.cursor),
    limit,
  });
  const shown = page(rows, limit);
  return { object: 'list' as const, data: shown.rows.map(summaryView), next_cursor: shown.next };
}

export async function getAdminOrder(deps: Deps, id: string): Promise<AdminOrder> {
  const order = await repo.findOrder(deps.db, id);
  if (!order) throw noOrder(id);
  return orderView(deps.db, order);
}

export interface AuditQuery {
  client_id?: string;
  operation?: string;
  target_id?: string;
  created_from?: string;
  created_before?: string;
  cursor?: string;
  limit?: number;
}

export async function listAuditEvents(deps: Deps, query: AuditQuery) {
  const limit = query.limit ?? PAGE;
  const rows = await repo.listAudit(deps.db, {
    clientId: query.client_id,
    operation: query.operation,
    targetId: query.target_id,
    createdFrom: dateParam(query.created_from, 'created_from'),
    createdBefore: dateParam(query.created_before, 'created_before'),
    after: readCursor(query.cursor),
    limit,
  });
  const shown = page(rows, limit);
  return { object: 'list' as const, data: shown.rows.map(auditView), next_cursor: shown.next };
}

/** How a change was answered: the order after it (ran, or replayed from its key). */
export type AdminChange = { order: AdminOrder; replayed: boolean };

type Change = (
  trx: Db,
  order: AdminOrderRow,
  lines: OrderLineRow[],
) => Promise<{ changes: Parameters<typeof repo.updateOrder>[2]; details: Record<string, unknown> }>;

function snapshot(order: AdminOrderRow) {
  return { status: order.status, fulfilment_status: order.fulfilment_status, amount_refunded: order.amount_refunded };
}

/** What each change is to the protocols' order events (src/services/order-events.ts). */
const HAPPENINGS: Record<string, OrderHappening> = {
  createOrderShipment: 'shipped',
  markOrderDelivered: 'delivered',
  cancelAdminOrder: 'canceled',
  refundAdminOrder: 'refunded',
};

/** One admin change of one order (runAdminChange), the order locked, and the agent told of it through the outbox. */
async function changeOrder(
  deps: Deps,
  call: AdminCall<unknown>,
  operation: string,
  orderId: string,
  change: Change,
): Promise<AdminChange> {
  const { answer, replayed } = await runAdminChange(
    deps,
    call,
    operation,
    { type: 'order', id: orderId },
    async (trx, at) => {
      const order = await repo.lockOrder(trx, orderId);
      if (!order) throw noOrder(orderId);
      const lines = await linesOf(trx, orderId);
      const { changes, details } = await change(trx, order, lines);
      const updated = await repo.updateOrder(trx, orderId, { ...changes, updated_at: at });
      await tellAgent(trx, deps, updated, 'order.updated', HAPPENINGS[operation]);
      return {
        before: snapshot(order),
        after: { ...snapshot(updated), ...details },
        render: (db) => orderView(db, updated),
      };
    },
  );
  return { order: answer, replayed };
}

/** Checks `requested` against the order's lines and what each has left (`left`); each line named once. */
function checkLineQuantities(
  requested: LineQuantity[],
  lines: OrderLineRow[],
  left: (line: OrderLineRow) => number,
  param: string,
): void {
  const seen = new Set<string>();
  requested.forEach((item, index) => {
    const line = lines.find((candidate) => candidate.id === item.line_id);
    if (!line) throw badRequest(`The order has no line ${item.line_id}.`, `${param}[${index}].line_id`);
    if (seen.has(item.line_id)) throw badRequest(`Line ${item.line_id} is named twice.`, `${param}[${index}].line_id`);
    seen.add(item.line_id);
    if (item.quantity > left(line))
      throw badRequest(
        `Line ${item.line_id} has ${left(line)} unit(s) left for this, not ${item.quantity}.`,
        `${param}[${index}].quantity`,
      );
  });
}

export async function shipOrder(
  deps: Deps,
  id: string,
  call: AdminCall<Schemas['AdminShipmentRequest']>,
): Promise<AdminChange> {
  return changeOrder(deps, call, 'createOrderShipment', id, async (trx, order, lines) => {
    const state = { status: order.status, fulfilment: order.fulfilment_status };
    transition(state, 'ship_part'); // refused here, naming the state, before the lines are looked at
    const shipped = unitsByLine(await repo.shipmentsOf(trx, order.id));
    const left = (line: OrderLineRow) => line.quantity - (shipped.get(line.id) ?? 0);
    const requested =
      call.body.line_items ??
      lines.filter((line) => left(line) > 0).map((line) => ({ line_id: line.id, quantity: left(line) }));
    checkLineQuantities(requested, lines, left, 'line_items');
    for (const item of requested) shipped.set(item.line_id, (shipped.get(item.line_id) ?? 0) + item.quantity);
    const all = lines.every((line) => (shipped.get(line.id) ?? 0) >= line.quantity);
    const next = transition(state, all ? 'ship_rest' : 'ship_part');
    const shipment: repo.ShipmentRow = {
      id: deps.ids.next('ship'),
      order_id: order.id,
      carrier: call.body.carrier,
      tracking_number: call.body.tracking_number,
      tracking_url: call.body.tracking_url ?? null,
      lines: requested,
      shipped_at: new Date(deps.now()),
      delivered_at: null,
    };
    await repo.insertShipment(trx, shipment);
    return {
      changes: { fulfilment_status: next.fulfilment },
      details: {
        shipment_id: shipment.id,
        carrier: shipment.carrier,
        tracking_number: shipment.tracking_number,
        line_items: requested,
      },
    };
  });
}

export async function deliverOrder(
  deps: Deps,
  id: string,
  call: AdminCall<Schemas['AdminNote'] | undefined>,
): Promise<AdminChange> {
  return changeOrder(deps, call, 'markOrderDelivered', id, async (trx, order) => {
    const next = transition({ status: order.status, fulfilment: order.fulfilment_status }, 'deliver');
    await repo.markShipmentsDelivered(trx, order.id, new Date(deps.now()));
    return { changes: { fulfilment_status: next.fulfilment }, details: { reason: call.body?.reason ?? null } };
  });
}

/** Gives `amount` back through the processor that took the order's payment; the processor's refund id. */
async function refundThroughProcessor(deps: Deps, order: AdminOrderRow, amount: number, refundId: string) {
  if (order.processor === 'test') return `test_${refundId}`;
  if (!deps.stripe)
    throw new ProcessorUnavailable('This order was paid through Stripe, which this instance is not configured for.');
  try {
    const refund = await deps.stripe.refunds.create(
      { payment_intent: order.payment_reference, amount, metadata: { order_id: order.id, refund_id: refundId } },
      { idempotencyKey: `admin-refund:${refundId}`, timeout: REFUND_TIMEOUT_MS },
    );
    return refund.id;
  } catch {
    throw new ProcessorUnavailable('Stripe did not take the refund; nothing was changed. Retry with the same key.');
  }
}

/** Records a refund of `amount` (0: none), restocking `restock`, and what the order becomes. */
async function refund(
  deps: Deps,
  trx: Db,
  order: AdminOrderRow,
  lines: OrderLineRow[],
  amount: number,
  restock: LineQuantity[],
  reason: string | null,
) {
  const refundId = deps.ids.next('refund');
  const reference = amount > 0 ? await refundThroughProcessor(deps, order, amount, refundId) : null;
  await repo.insertRefund(trx, {
    id: refundId,
    order_id: order.id,
    amount,
    currency: order.paid_currency,
    reason,
    restocked: restock.length > 0,
    lines: restock,
    processor: order.processor,
    processor_reference: reference,
    created_at: new Date(deps.now()),
  });
  await repo.restock(
    trx,
    restock.map((item) => ({
      variantId: lines.find((line) => line.id === item.line_id)!.variant_id,
      quantity: item.quantity,
    })),
  );
  return { refund_id: refundId, amount, restock };
}

async function restockedUnits(trx: Db, orderId: string): Promise<Map<string, number>> {
  return unitsByLine((await repo.refundsOf(trx, orderId)).filter((row) => row.restocked));
}

export async function cancelOrder(
  deps: Deps,
  id: string,
  call: AdminCall<Schemas['AdminNote'] | undefined>,
): Promise<AdminChange> {
  return changeOrder(deps, call, 'cancelAdminOrder', id, async (trx, order, lines) => {
    const next = transition({ status: order.status, fulfilment: order.fulfilment_status }, 'cancel');
    const restocked = await restockedUnits(trx, order.id);
    const restock = lines
      .map((line) => ({ line_id: line.id, quantity: line.quantity - (restocked.get(line.id) ?? 0) }))
      .filter((item) => item.quantity > 0);
    const left = order.amount_paid - order.amount_refunded;
    const refunded = await refund(deps, trx, order, lines, Math.max(left, 0), restock, call.body?.reason ?? null);
    await repo.releaseRedemptions(trx, order.promo_codes);
    return {
      changes: {
        status: next.status,
        amount_refunded: order.amount_refunded + refunded.amount,
        canceled_at: new Date(deps.now()),
      },
      details: { ...refunded, released_promo_codes: order.promo_codes },
    };
  });
}

export async function refundOrder(
  deps: Deps,
  id: string,
  call: AdminCall<Schemas['AdminRefundRequest'] | undefined>,
): Promise<AdminChange> {
  return changeOrder(deps, call, 'refundAdminOrder', id, async (trx, order, lines) => {
    const state = { status: order.status, fulfilment: order.fulfilment_status };
    transition(state, 'refund_part'); // refused here, naming the state, before the amount is looked at
    const left = order.amount_paid - order.amount_refunded;
    const amount = call.body?.amount ?? left;
    if (amount > left)
      throw badRequest(
        `Only ${left} (minor units of ${order.paid_currency}) is left to refund, not ${amount}.`,
        'amount',
      );
    const restock = call.body?.restock ?? [];
    const restocked = await restockedUnits(trx, order.id);
    checkLineQuantities(restock, lines, (line) => line.quantity - (restocked.get(line.id) ?? 0), 'restock');
    const change: OrderTransition = amount === left ? 'refund_rest' : 'refund_part';
    const next = transition(state, change);
    const refunded = await refund(deps, trx, order, lines, amount, restock, call.body?.reason ?? null);
    return {
      changes: { status: next.status, amount_refunded: order.amount_refunded + amount },
      details: refunded,
    };
  });
}
