// The order path: every reported payment (a processor webhook, or the built-in test processor's button) and refund
// goes through here. One transaction records the processor event, creates the order, completes the session, takes the
// stock and counts the promotion's redemption; the event id and the session row lock make it exactly-once across
// redeliveries, concurrent deliveries and instances.
import * as carts from '../db/repositories/carts.js';
import * as orders from '../db/repositories/orders.js';
import type { OrderRow, OrderWithLines, Processor } from '../db/repositories/orders.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { NotFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import {
  initialStatus,
  ORDER_NUMBER_PREFIX,
  paymentProblems,
  planStock,
  statusAfterRefund,
  type Quote,
  type ReviewReason,
  type StockRow,
} from '../domain/orders.js';
import type { components } from '../../codegen/types.js';
import { toMajorUnits } from '../domain/money.js';
import { orderSummary, presentPaidSession, quoteCart } from './checkout.js';
import { enqueueOrderEvent, wantsOrderEvents, type OrderEventType } from './order-webhooks.js';

export type AgentOrder = components['schemas']['AgentOrder'];

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
  | { kind: 'duplicate' };

export function unknownSession(id: string): NotFound {
  return new NotFound(`No checkout session with id ${id}.`, { param: 'id' });
}

/**
 * The session as priced now, for a payment whose quote is not known (a processor checkout this store has no record
 * of): read on the transaction's connection, its variants then locked as PAYMENT_CLAIM locks a known quote's.
 */
async function priceNow(trx: Db, deps: Deps, sessionId: string): Promise<{ quote: Quote; stock: StockRow[] }> {
  const found = await carts.findCartWithLines(trx, sessionId);
  if (!found) throw unknownSession(sessionId);
  const { quote } = quoteCart(deps, found);
  return {
    quote,
    stock: await orders.lockStock(
      trx,
      quote.lines.map((line) => line.variantId),
    ),
  };
}

export async function recordPayment(deps: Deps, report: PaymentReport): Promise<PaymentOutcome> {
  const at = new Date(deps.now());
  // The common payment, whole in one statement (shared with concurrent payments); the rest (a quote to price now, an
  // agent to tell) in a transaction.
  const taken = await orders.pay(deps.db, {
    processor: report.processor,
    eventId: report.eventId,
    eventType: report.eventType,
    at,
    sessionId: report.sessionId,
    checkoutReference: report.checkoutReference,
    quote: report.quote,
    orderId: newId('order'),
    numberPrefix: ORDER_NUMBER_PREFIX,
    permalinkToken: newId('rcpt'),
    amountPaid: report.amountPaid,
    currency: report.currency,
    buyerEmail: report.buyerEmail ?? null,
    paymentReference: report.paymentReference,
  });
  switch (taken.kind) {
    case 'duplicate':
      return { kind: 'duplicate' };
    case 'completed':
      return { kind: 'existing', order: (await orders.findOrderBySession(deps.db, report.sessionId))!.order };
    case 'created':
      if (taken.order.review_reasons.length) logReview(deps, report, taken.order, taken.quoted);
      return { kind: 'created', order: taken.order };
    case 'needs_transaction':
      return recordPaymentInTransaction(deps, report, at);
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

/** A payment PAID_ORDERS leaves to JavaScript: claimed, then written, in one transaction. */
async function recordPaymentInTransaction(deps: Deps, report: PaymentReport, at: Date): Promise<PaymentOutcome> {
  const result = await deps.db.transaction(async (trx): Promise<{ outcome: PaymentOutcome; quote?: Quote }> => {
    // The event, the session's lock, the quote sent to the processor and the stock's locks: one round trip.
    const claim = await orders.claimPayment(trx, {
      processor: report.processor,
      eventId: report.eventId,
      eventType: report.eventType,
      at,
      sessionId: report.sessionId,
      checkoutReference: report.quote ? undefined : report.checkoutReference,
      variantIds: report.quote?.lines.map((line) => line.variantId),
    });
    if (!claim.recorded) return { outcome: { kind: 'duplicate' } };
    const { cart } = claim;
    if (!cart || cart.status === 'open') throw unknownSession(report.sessionId);
    if (cart.status === 'completed') {
      const existing = await orders.findOrderBySession(trx, cart.id);
      return { outcome: { kind: 'existing', order: existing!.order } };
    }
    // The quote the payment is for: what the processor was asked to charge, or the session as priced now.
    const known = report.quote ?? claim.quoteSent;
    const { quote, stock: locked } = known
      ? { quote: known, stock: claim.stock }
      : await priceNow(trx, deps, report.sessionId);

    const reasons: ReviewReason[] = paymentProblems(quote, {
      amountPaid: report.amountPaid,
      currency: report.currency,
    });
    // Money was taken for a session cancelled meanwhile: keep it as an order for a person to resolve, never lose it.
    if (cart.status === 'canceled') reasons.push('session_canceled');
    const stock = planStock(quote.lines, locked);
    if (stock.short) reasons.push('insufficient_stock');

    const unnumbered: Omit<OrderRow, 'order_number'> = {
      id: newId('order'),
      session_id: cart.id,
      client_id: cart.client_id,
      status: initialStatus(reasons),
      review_reasons: reasons,
      region_id: quote.regionId,
      currency: quote.currencyCode,
      ...quote.totals,
      amount_paid: report.amountPaid,
      paid_currency: report.currency.toLowerCase(),
      amount_refunded: 0,
      promo_codes: quote.promoCodes,
      buyer_email: report.buyerEmail ?? cart.buyer_email,
      processor: report.processor,
      payment_reference: report.paymentReference,
      permalink_token: newId('rcpt'),
      created_at: at,
      updated_at: at,
    };
    // The stock, the redemptions, the order and its lines, and the session completed: one round trip.
    const order: OrderRow = {
      ...unnumbered,
      order_number: await orders.insertPaidOrder(trx, {
        order: unnumbered,
        numberPrefix: ORDER_NUMBER_PREFIX,
        quote,
        stock: stock.updates,
      }),
    };
    await tellAgent(trx, deps, order, 'order.created');
    return { outcome: { kind: 'created', order }, quote };
  });
  const { outcome, quote } = result;
  if (outcome.kind === 'created' && quote && outcome.order.review_reasons.length)
    logReview(deps, report, outcome.order, { total: quote.totals.total, currency: quote.currencyCode });
  return outcome;
}

export interface RefundReport {
  processor: Processor;
  eventId: string;
  eventType: string;
  paymentReference: string;
  /** Everything refunded on the payment so far (processors report the running total). */
  amountRefunded: number;
}

export type RefundOutcome = { kind: 'updated'; order: OrderRow } | { kind: 'duplicate' };

export async function recordRefund(deps: Deps, report: RefundReport): Promise<RefundOutcome> {
  const at = new Date(deps.now());
  return deps.db.transaction(async (trx): Promise<RefundOutcome> => {
    if (!(await orders.recordEvent(trx, report.processor, report.eventId, report.eventType, at)))
      return { kind: 'duplicate' };
    const order = await orders.lockOrderByPayment(trx, report.processor, report.paymentReference);
    if (!order) throw new NotFound(`No order was paid with ${report.paymentReference}.`, { param: 'payment_intent' });
    // Refund events may arrive out of order: the running total only grows.
    const refunded = Math.max(order.amount_refunded, report.amountRefunded);
    const status = statusAfterRefund(order.status, order.amount_paid, refunded);
    const updated = await orders.updateOrder(trx, order.id, { status, amount_refunded: refunded, updated_at: at });
    if (updated.status !== order.status || updated.amount_refunded !== order.amount_refunded)
      await tellAgent(trx, deps, updated, 'order.updated');
    return { kind: 'updated', order: updated };
  });
}

/** The order as agents see it (GET /agent/orders/{id} and the webhook events): every amount as charged. */
export function agentOrderView(deps: Deps, paid: OrderWithLines): AgentOrder {
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
    created_at: new Date(order.created_at).toISOString(),
    updated_at: new Date(order.updated_at).toISOString(),
  };
}

/** Queues the event for the agent whose cart this was, inside the order's transaction (a transactional outbox). */
async function tellAgent(trx: Db, deps: Deps, order: OrderRow, type: OrderEventType): Promise<void> {
  if (!order.client_id || !(await wantsOrderEvents(trx, order.client_id))) return;
  const paid = await orders.findOrderBySession(trx, order.session_id);
  await enqueueOrderEvent(trx, deps, order.client_id, type, agentOrderView(deps, paid!));
}

export async function getAgentOrder(deps: Deps, clientId: string, id: string): Promise<AgentOrder> {
  const paid = await orders.findClientOrder(deps.db, id, clientId);
  if (!paid) throw new NotFound(`No order with id ${id} for this client.`, { param: 'id' });
  return agentOrderView(deps, paid);
}

export async function findOrderByToken(deps: Deps, token: string): Promise<OrderWithLines | undefined> {
  return orders.findOrderByToken(deps.db, token);
}
