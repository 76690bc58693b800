// A payment a processor reports, what becomes of it (PAID_ORDERS, ./paid-orders.ts), and the payments refused for
// their processor to refund.
import type { Quote } from '../../domain/orders.js';
import type { Db } from '../knex.js';
import type { OrderRow, Processor } from './orders.js';

/** A processor's event reporting a session paid. */
export interface PaymentEvent {
  processor: Processor;
  eventId: string;
  eventType: string;
  at: Date;
  sessionId: string;
  /** The processor's checkout the buyer paid through, whose stored quote is read when none is given. */
  checkoutReference: string | undefined;
}

export interface PaymentToTake extends PaymentEvent {
  /** The quote paid, when the caller has it (otherwise the one sent under `checkoutReference`). */
  quote: Quote | undefined;
  /** The new order's id and receipt token, and what goes before the sequence's number (`SF-` makes SF-1001). */
  orderId: string;
  numberPrefix: string;
  permalinkToken: string;
  amountPaid: number;
  currency: string;
  /** Recorded instead of the session's own, when the processor reports one. */
  buyerEmail: string | null;
  paymentReference: string;
  /** The caller tells the session's agent itself, inside the transaction it runs this in. */
  tellsAgent?: boolean;
}

/** Why a payment that arrived was not taken, but refunded. */
export type RefusalReason = 'session_canceled' | 'insufficient_stock' | 'promotion_exhausted';

export type PaymentTaken =
  /** Nothing was written: the payment needs a transaction (a quote to price now, an agent to tell: see PAID_ORDERS). */
  | { kind: 'needs_transaction' }
  /** The event was handled before: nothing was written. */
  | { kind: 'duplicate' }
  /** The event was recorded for a session completed already. */
  | { kind: 'completed' }
  /** The order made, and the total and currency of the quote it was made from. */
  | { kind: 'created'; order: OrderRow; quoted: { total: number; currency: string } }
  /** The store cannot honour it: recorded in refused_payments, to be refunded; nothing else changed. */
  | { kind: 'refused'; reasons: RefusalReason[] };

/** A payment refused (PAID_ORDERS), recorded for its processor to refund. */
export interface RefusedPaymentRow {
  processor: Processor;
  payment_reference: string;
  session_id: string;
  event_id: string;
  reasons: RefusalReason[];
  amount: number;
  currency: string;
  refund_state: 'pending' | 'refunded';
  refund_reference: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The payment refused (PAID_ORDERS), if `reference` is one. */
export async function findRefusedPayment(
  db: Db,
  processor: Processor,
  reference: string,
): Promise<RefusedPaymentRow | undefined> {
  return (await db('refused_payments').where({ processor, payment_reference: reference }).first()) as
    RefusedPaymentRow | undefined;
}

/** The session's refused payments, latest first. */
export async function refusedPaymentsOf(db: Db, sessionId: string): Promise<RefusedPaymentRow[]> {
  return (await db('refused_payments')
    .where({ session_id: sessionId })
    .orderBy('created_at', 'desc')) as RefusedPaymentRow[];
}

/** Records the processor's refund of a refused payment (once: a later report changes nothing). */
export async function markRefunded(
  db: Db,
  processor: Processor,
  reference: string,
  refundReference: string,
  at: Date,
): Promise<RefusedPaymentRow | undefined> {
  const [row] = (await db('refused_payments')
    .where({ processor, payment_reference: reference })
    .update({
      refund_state: 'refunded',
      refund_reference: db.raw('coalesce(refund_reference, ?)', [refundReference]),
      updated_at: at,
    })
    .returning('*')) as RefusedPaymentRow[];
  return row;
}
