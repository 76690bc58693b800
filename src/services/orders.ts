// The order path: every reported payment (a processor webhook, or the built-in test processor's button) and refund
// goes through here. One statement (PAID_ORDERS) records the processor event and either creates the order, completes
// the session, takes the stock and counts the promotion's redemption, or, when the store cannot honour the payment,
// records it refused for its processor to refund; the event id and the session row lock make it exactly-once across
// redeliveries, concurrent deliveries and instances.
import { refundsOf, shipmentsOf } from '../db/repositories/admin-orders.js';
import * as carts from '../db/repositories/carts.js';
import * as orders from '../db/repositories/orders.js';
import type { OrderRow, OrderWithLines, Processor } from '../db/repositories/orders.js';
import * as paidOrders from '../db/repositories/paid-orders.js';
import * as payments from '../db/repositories/payments.js';
import type { RefusalReason } from '../db/repositories/payments.js';
import * as processorCheckouts from '../db/repositories/processor-checkouts.js';
import { recordEvent } from '../db/repositories/processor-events.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { NotFound } from '../domain/errors.js';
import { ORDER_NUMBER_PREFIX, statusAfterRefund, type Quote } from '../domain/orders.js';
import type { components } from '../../codegen/types.js';
import { toMajorUnits } from '../domain/money.js';
import { orderSummary, presentPaidSession, quoteCart } from './checkout.js';
import { withTerms } from './checkout/destination.js';
import type { OrderHappening } from '../domain/order-events.js';
import { tellProtocolAudience } from './order-events.js';
import { enqueueOrderEvent, wantsOrderEvents, type OrderEventType } from './order-webhooks.js';

export type AgentOrder = components['schemas']['AgentOrder'];
/** What the buyer's side shows of the store's work on an order: its fulfilment, shipments and refunds. */
export type OrderProgress = Required<Pick<AgentOrder, 'fulfilment_status' | 'shipments' | 'refunds'>>;

export interface PaymentReport {
  processor: Processor;
  /** The processor's event id: a second delivery of the same id changes nothing. */
  eventId: string;
  eventType: string;
  sessionId: string;
  /** The processor's id of the payment (a Stripe PaymentIntent id), which its refunds name. */
  paymentReference: string;
  /** The quote the buyer was asked to pay, when the caller has it (the test processor). */
  quote?: Quote;
  /** The processor's checkout the buyer paid through, whose stored quote the order records. */
  checkoutReference?: string;
  amountPaid: number;
  currency: string;
  buyerEmail?: string | null;
}

export type PaymentOutcome =
  /** This report created the order. */
  | { kind: 'created'; order: OrderRow }
  /** The session already had its order (another event for the same payment, or a redelivery). */
  | { kind: 'existing'; order: OrderRow }
  /** This event id was handled before. */
  | { kind: 'duplicate' }
  /** The store could not honour the payment (why: `reasons`): recorded, for its processor to refund. */
  | { kind: 'refused'; reasons: RefusalReason[] };

export function unknownSession(id: string): NotFound {
  return new NotFound(`No checkout session with id ${id}.`, { param: 'id' });
}

export async function recordPayment(deps: Deps, report: PaymentReport): Promise<PaymentOutcome> {
  const at = new Date(deps.now());
  // The common payment, whole in one statement (shared with concurrent payments); the rest (a quote to price now, an
  // agent to tell) in a transaction around the same statement.
  const payment: payments.PaymentToTake = {
    processor: report.processor,
    eventId: report.eventId,
    eventType: report.eventType,
    at,
    sessionId: report.sessionId,
    checkoutReference: report.checkoutReference,
    quote: report.quote,
    orderId: deps.ids.next('order'),
    numberPrefix: ORDER_NUMBER_PREFIX,
    permalinkToken: deps.ids.next('rcpt'),
    amountPaid: report.amountPaid,
    currency: report.currency,
    buyerEmail: report.buyerEmail ?? null,
    paymentReference: report.paymentReference,
  };
  const taken = await paidOrders.pay(deps.db, payment);
  if (taken.kind === 'needs_transaction') return recordPaymentInTransaction(deps, report, payment);
  return outcomeOf(deps, report, taken);
}

async function outcomeOf(
  deps: Deps,
  report: PaymentReport,
  taken: Exclude<payments.PaymentTaken, { kind: 'needs_transaction' }>,
  db: Db = deps.db,
): Promise<PaymentOutcome> {
  switch (taken.kind) {
    case 'duplicate':
      return { kind: 'duplicate' };
    case 'completed':
      return { kind: 'existing', order: (await orders.findOrderBySession(db, report.sessionId))!.order };
    case 'refused':
      deps.log.warn(
        { session: report.sessionId, payment: report.paymentReference, reasons: taken.reasons },
        'payment refused: it is refunded',
      );
      return { kind: 'refused', reasons: taken.reasons };
    case 'created':
      if (taken.order.review_reasons.length) logReview(deps, report, taken.order, taken.quoted);
      return { kind: 'created', order: taken.order };
  }
}

function logReview(
  deps: Deps,
  report: PaymentReport,
  order: OrderRow,
  quoted: { total: number; currency: string },
): void {
  deps.log.warn(
    {
      order: order.id,
      session: order.session_id,
      reasons: order.review_reasons,
      quoted: `${quoted.total} ${quoted.currency}`,
      paid: `${report.amountPaid} ${report.currency}`,
    },
    'paid order needs review',
  );
}

/**
 * A payment PAID_ORDERS leaves to JavaScript, through the same statement inside a transaction: with the session
 * priced now when the processor's checkout is not one this store recorded, and the agent told of its order.
 */
async function recordPaymentInTransaction(
  deps: Deps,
  report: PaymentReport,
  payment: payments.PaymentToTake,
): Promise<PaymentOutcome> {
  return deps.db.transaction(async (trx): Promise<PaymentOutcome> => {
    const quote =
      payment.quote ??
      (await processorCheckouts.sentQuote(trx, payment.processor, payment.checkoutReference, payment.sessionId)) ??
      (await priceNow(trx, deps, payment.sessionId));
    const [taken] = await paidOrders.payTogether(trx, [{ ...payment, quote, tellsAgent: true }]);
    // Not claimable even so: no session awaiting payment (nothing was written).
    if (taken!.kind === 'needs_transaction') throw unknownSession(payment.sessionId);
    if (taken!.kind === 'created') await tellAgent(trx, deps, taken!.order, 'order.created');
    return outcomeOf(deps, report, taken!, trx);
  });
}

/**
 * The session as priced now, for a payment whose quote is not known (a processor checkout this store has no record
 * of); undefined for a session paid already (its payment is then recorded as such).
 */
async function priceNow(trx: Db, deps: Deps, sessionId: string): Promise<Quote | undefined> {
  const found = await carts.findCartWithLines(trx, sessionId);
  if (!found || found.cart.status === 'open') throw unknownSession(sessionId);
  if (found.cart.status === 'completed') return undefined;
  return quoteCart(deps, await withTerms(deps, found)).quote;
}

export interface RefundReport {
  processor: Processor;
  eventId: string;
  eventType: string;
  paymentReference: string;
  /** Everything refunded on the payment so far (processors report the running total). */
  amountRefunded: number;
  /** The processor's id of the refund, when it names one. */
  refundReference?: string;
}

export type RefundOutcome =
  | { kind: 'updated'; order: OrderRow }
  | { kind: 'duplicate' }
  /** The refund of a payment this store refused (and asked the processor to refund): recorded on it. */
  | { kind: 'refusal_refunded' };

export async function recordRefund(deps: Deps, report: RefundReport): Promise<RefundOutcome> {
  const at = new Date(deps.now());
  return deps.db.transaction(async (trx): Promise<RefundOutcome> => {
    if (!(await recordEvent(trx, report.processor, report.eventId, report.eventType, at))) return { kind: 'duplicate' };
    const order = await orders.lockOrderByPayment(trx, report.processor, report.paymentReference);
    if (!order && (await payments.findRefusedPayment(trx, report.processor, report.paymentReference))) {
      if (report.refundReference)
        await payments.markRefunded(trx, report.processor, report.paymentReference, report.refundReference, at);
      return { kind: 'refusal_refunded' };
    }
    if (!order) throw new NotFound(`No order was paid with ${report.paymentReference}.`, { param: 'payment_intent' });
    // Refund events may arrive out of order: the running total only grows.
    const refunded = Math.max(order.amount_refunded, report.amountRefunded);
    const status = statusAfterRefund(order.status, order.amount_paid, refunded);
    const updated = await orders.updateOrder(trx, order.id, { status, amount_refunded: refunded, updated_at: at });
    if (updated.status !== order.status || updated.amount_refunded !== order.amount_refunded)
      await tellAgent(trx, deps, updated, 'order.updated', 'refunded');
    return { kind: 'updated', order: updated };
  });
}

/** The order's fulfilment, its shipments and its refunds (oldest first), as the buyer's side shows them. */
export async function orderProgress(db: Db, order: OrderRow): Promise<OrderProgress> {
  const [shipments, refunds] = [await shipmentsOf(db, order.id), await refundsOf(db, order.id)];
  const iso = (date: Date | null) => (date === null ? null : new Date(date).toISOString());
  return {
    fulfilment_status: order.fulfilment_status ?? 'unfulfilled',
    shipments: shipments.map((shipment) => ({
      carrier: shipment.carrier,
      tracking_number: shipment.tracking_number,
      tracking_url: shipment.tracking_url,
      shipped_at: new Date(shipment.shipped_at).toISOString(),
      delivered_at: iso(shipment.delivered_at),
    })),
    refunds: refunds.map((refund) => ({
      amount: { amount: toMajorUnits(refund.amount, refund.currency), currency: refund.currency },
      reason: refund.reason,
      created_at: new Date(refund.created_at).toISOString(),
    })),
  };
}

/**
 * The order as agents see it (GET /agent/orders/{id} and the webhook events): every amount as charged, with the
 * store's progress on it (orderProgress).
 */
export function agentOrderView(deps: Deps, paid: OrderWithLines, progress: OrderProgress): AgentOrder {
  const { order } = paid;
  const session = presentPaidSession(deps, paid);
  const paidAmount = (value: number) => ({
    amount: toMajorUnits(value, order.paid_currency),
    currency: order.paid_currency,
  });
  return {
    id: order.id,
    object: 'order',
    order_number: order.order_number,
    checkout_session_id: order.session_id,
    status: order.status,
    review_reasons: order.review_reasons,
    currency: order.currency,
    line_items: session.line_items,
    totals: session.totals,
    promo_codes: order.promo_codes,
    amount_paid: paidAmount(order.amount_paid),
    amount_refunded: paidAmount(order.amount_refunded),
    permalink_url: orderSummary(deps, order).permalink_url,
    tax_included: session.tax_included ?? false,
    ...(session.shipping_address
      ? {
          shipping_address: session.shipping_address,
          ...(session.shipping_option ? { shipping_option: session.shipping_option } : {}),
          ...(session.shipping_tax ? { shipping_tax: session.shipping_tax } : {}),
          tax_lines: session.tax_lines ?? [],
        }
      : {}),
    ...progress,
    created_at: new Date(order.created_at).toISOString(),
    updated_at: new Date(order.updated_at).toISOString(),
  };
}

/**
 * Queues the event for the agent whose cart this was, and for the protocol audience of a UCP or ACP session (what
 * happened to the order: created, shipped, …; src/services/order-events.ts), inside the order's transaction (a
 * transactional outbox).
 */
export async function tellAgent(
  trx: Db,
  deps: Deps,
  order: OrderRow,
  type: OrderEventType,
  happening: OrderHappening = type === 'order.created' ? 'created' : 'updated',
): Promise<void> {
  await tellProtocolAudience(trx, deps, order, happening);
  if (!order.client_id || !(await wantsOrderEvents(trx, order.client_id))) return;
  const paid = await orders.findOrderBySession(trx, order.session_id);
  await enqueueOrderEvent(
    trx,
    deps,
    order.client_id,
    type,
    agentOrderView(deps, paid!, await orderProgress(trx, paid!.order)),
  );
}

export async function getAgentOrder(deps: Deps, clientId: string, id: string): Promise<AgentOrder> {
  const paid = await orders.findClientOrder(deps.db, id, clientId);
  if (!paid) throw new NotFound(`No order with id ${id} for this client.`, { param: 'id' });
  return agentOrderView(deps, paid, await orderProgress(deps.db, paid.order));
}

export async function findOrderByToken(deps: Deps, token: string): Promise<OrderWithLines | undefined> {
  return orders.findOrderByToken(deps.db, token);
}
