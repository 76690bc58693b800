// Orders, their lines, processor events and processor checkouts.
import type { OrderStatus, Quote, ReviewReason, StockRow } from '../../domain/orders.js';
import { asPrepared, batchedPerDatabase, runPrepared, type Db } from '../knex.js';
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
 * The first statement of a payment's transaction, in PostgreSQL's own form (runPrepared): the session locked, the
 * event recorded, then, only if it was new, the quote sent to the processor under $6 read, and, only if the session can
 * still become an order, its variants locked in id order (those of $7, or else of the quote sent). Each step depends
 * on the one before, in one round trip instead of four. The locks are taken in the order PAID_ORDERS takes them
 * (session, event, stock by id), so concurrent payments of one session, whichever way each goes, and orders sharing
 * variants cannot deadlock. Stock is locked FOR NO KEY UPDATE (see lockStock).
 */
const PAYMENT_CLAIM = `with cart as materialized (
  select id, status, client_id, buyer_email from carts where id = $5 for update
), event as (
  insert into processor_events (processor, event_id, type, received_at)
  select $1::text, $2::text, $3::text, $4::timestamptz from (select count(*) from cart) as session_locked_first
  on conflict (processor, event_id) do nothing
  returning event_id
), sent as (
  select quote from processor_checkouts
  where processor = $1 and reference = $6 and session_id = $5 and exists (select from cart) and exists (select from event)
), stock as (
  select id, manage_inventory, allow_backorder, inventory_quantity from variants
  where id = any(coalesce($7::text[],
      array(select line->>'variantId' from sent, jsonb_array_elements(sent.quote->'lines') as line)))
    and exists (select from cart where status in ('ready_for_payment', 'canceled')) and exists (select from event)
  order by id
  for no key update
)
select exists (select from event) as recorded, cart.id, cart.status, cart.client_id, cart.buyer_email,
  (select quote from sent) as quote_sent,
  (select coalesce(json_agg(stock), '[]') from stock) as stock
from (values (1)) as one left join cart on true`;

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

/** $1 to $6 of PAYMENT_CLAIM. */
function eventParameters(payment: PaymentEvent): unknown[] {
  const { processor, eventId, eventType, at, sessionId, checkoutReference } = payment;
  return [processor, eventId, eventType, at, sessionId, checkoutReference ?? null];
}

export interface PaymentToClaim extends PaymentEvent {
  /** The variants to lock when the quote is known already (otherwise those of the quote sent). */
  variantIds: string[] | undefined;
}

export type PaymentClaim =
  /** The event was handled before: nothing was read or locked but the session. */
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
 * Locks the session, records a processor event once and, if it is new, locks the stock its payment changes
 * (PAYMENT_CLAIM). Inside the
 * payment's transaction: the locks last until it ends.
 */
export async function claimPayment(db: Db, payment: PaymentToClaim): Promise<PaymentClaim> {
  const [row] = await runPrepared<PaymentClaimRow>(db, 'claim_payment', PAYMENT_CLAIM, [
    ...eventParameters(payment),
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
}

export type PaymentTaken =
  /** Nothing was written: the payment needs claimPayment's transaction (see PAID_ORDERS). */
  | { kind: 'needs_transaction' }
  /** The event was handled before: nothing was written. */
  | { kind: 'duplicate' }
  /** The event was recorded for a session completed already. */
  | { kind: 'completed' }
  /** The order made, and the total and currency of the quote it was made from. */
  | { kind: 'created'; order: OrderRow; quoted: { total: number; currency: string } };

type PaymentTakenRow = Partial<OrderRow> & {
  claimable: boolean;
  recorded: boolean;
  cart_status: CartRow['status'] | null;
  quoted_total: number | null;
  quoted_currency: string | null;
};

function paymentTaken(row: PaymentTakenRow): PaymentTaken {
  const { claimable, recorded, cart_status, quoted_total, quoted_currency, ...order } = row;
  if (!claimable) return { kind: 'needs_transaction' };
  if (!recorded) return { kind: 'duplicate' };
  if (cart_status === 'completed') return { kind: 'completed' };
  return { kind: 'created', order: order as OrderRow, quoted: { total: quoted_total!, currency: quoted_currency! } };
}

/** The payments of PAID_ORDERS and PAYMENT_LOCKS: $1, a JSON array of paidOrdersRecord. */
const PAYMENTS = `jsonb_to_recordset($1::jsonb) as p (n int, processor text, event_id text, event_type text,
    at timestamptz, session_id text, checkout_reference text, quote_given jsonb, order_id text, number_prefix text,
    permalink_token text, amount_paid bigint, currency text, buyer_email text, payment_reference text)`;

/** The quote a row `payment` of PAYMENTS pays: the one given, or else the one sent to the processor. */
const QUOTE_PAID = `coalesce(payment.quote_given, (select quote from processor_checkouts c
                                    where c.processor = payment.processor and c.reference = payment.checkout_reference
                                      and c.session_id = payment.session_id))`;

/**
 * Paid orders in one statement, run on its own (autocommit), for one payment or for many of distinct sessions and
 * distinct events ($1: a JSON array of paidOrdersRecord, one per payment, `n` from 1, so the text is fixed whatever the
 * batch holds). For each payment: the session locked, the event recorded, the quote paid (the one given, or else the
 * one sent to the processor under its checkout reference) read, its variants locked FOR NO KEY UPDATE (see lockStock),
 * and, if the event was new, everything the order writes (as PAID_ORDER): the stock left, the redemptions, the order
 * numbered from the sequence with its review reasons (as paymentProblems, planStock and initialStatus decide them), its
 * lines, and its session completed. One round trip and one commit for every payment it carries, and the stock rows,
 * which every order of a variant takes, are held for this statement only. Each payment's outcome is what it would be
 * had the payments been paid one after another in the order given.
 *
 * A payment goes ahead only where nothing but SQL is needed (`ready`): a session awaiting payment (or cancelled
 * meanwhile) whose quote is known and whose agent, if any, takes no order events. Then, or for a session completed
 * already, the event is recorded (`claimable`); otherwise nothing is written for it, and the caller takes the payment
 * through the transaction of claimPayment and insertPaidOrder, whose JavaScript prices the session or writes the
 * agent's event. The session is locked before the event is recorded: a concurrent payment of the same session waits
 * here and then finds it completed (its locked row is the latest), so it records its own event and makes no order.
 * The locks are taken each kind in key order (the sessions by id, the events by key, the stock by id, the promotions by
 * code), so two instances' statements cannot deadlock (a batch of several runs takes them all first: PAYMENT_LOCKS).
 *
 * Where payments meet is the stock and the promotions. A variant's stock after each order, in payment order, is what
 * it was less the running sum of the quantities ordered so far (`running`): floored at zero without backorder, and
 * flooring each order's result or only the last gives the same number; an order is short when its running sum passes
 * the stock (then so are the later ones, for a quantity of at least one). The stock left is the last order's; a
 * promotion is redeemed once per order that names it. The order numbers are drawn from the sequence and handed out in
 * payment order.
 *
 * The stock left and the redemptions are written as upserts that always meet their row (the row itself inserted
 * again, `on conflict do update`): each row is locked first (`stock`, `redeemed`), so none can be deleted meanwhile and
 * inserted again by the upsert. Under load this statement waits for those rows, which other orders changed after it
 * began; an UPDATE would then recheck each (EvalPlanQual), setting up every part of this statement's plan again: about
 * 0.4 ms of PostgreSQL CPU per order (bench/orders.ts, 1.56 against 1.17 ms). An upsert's update takes the row's latest
 * version as it is, and the quantities come from `stock`, read from the rows as locked. Exported so that tests can
 * count the statements sent.
 */
export const PAID_ORDERS = `with payment as materialized (
  select * from ${PAYMENTS}
), cart as materialized (
  select id, status, client_id, buyer_email from carts
  where id = any(array(select session_id from payment))
  order by id
  for update
), ready as materialized (
  select payment.n, cart.status, cart.client_id, cart.buyer_email as session_buyer_email, paid.quote
  from payment join cart on cart.id = payment.session_id,
    lateral (select ${QUOTE_PAID} as quote) as paid
  where cart.status in ('ready_for_payment', 'canceled') and paid.quote is not null
    and not exists (select from oauth_clients c where c.id = cart.client_id and c.webhook_url is not null)
), claimable as materialized (
  select n from payment
  where n in (select n from ready) or session_id in (select id from cart where status = 'completed')
), event as materialized (
  insert into processor_events (processor, event_id, type, received_at)
  select processor, event_id, event_type, at from payment where n in (select n from claimable)
  order by processor, event_id
  on conflict (processor, event_id) do nothing
  returning processor, event_id
), made as materialized (
  select payment.*, ready.status, ready.client_id, ready.session_buyer_email, ready.quote
  from payment join ready on ready.n = payment.n
  where (payment.processor, payment.event_id) in (select processor, event_id from event)
), wanted as materialized (
  select made.n, line->>'variantId' as id, sum((line->>'quantity')::int) as quantity
  from made, jsonb_array_elements(made.quote->'lines') as line
  group by 1, 2
), stock as materialized (
  select id, manage_inventory, allow_backorder, inventory_quantity from variants
  where id = any(array(select id from wanted))
  order by id
  for no key update
), running as materialized (
  select wanted.n, stock.id, stock.manage_inventory, stock.allow_backorder,
         stock.inventory_quantity - sum(wanted.quantity) over (partition by stock.id order by wanted.n) as remaining
  from wanted join stock on stock.id = wanted.id
), reasons as materialized (
  select made.n, array_remove(array[
      case when lower(made.currency) <> lower(made.quote->>'currencyCode') then 'currency_mismatch'
           when made.amount_paid <> (made.quote->'totals'->>'total')::bigint then 'amount_mismatch' end,
      case when made.status = 'canceled' then 'session_canceled' end,
      case when exists (select from running
                        where running.n = made.n and manage_inventory and not allow_backorder and remaining < 0)
           then 'insufficient_stock' end
    ], null) as list
  from made
), taken as (
  insert into variants select v.* from variants v where id = any(array(select id from stock where manage_inventory))
  on conflict (id) do update
  set inventory_quantity = (select case when allow_backorder then remaining else greatest(remaining, 0) end
                            from running where running.id = excluded.id order by running.n desc limit 1)
), redeemed as materialized (
  select code from promotions
  where code = any(array(select jsonb_array_elements_text(quote->'promoCodes') from made))
    and exists (select from reasons)
  order by code
  for no key update
), redemptions as (
  insert into promotions select p.* from promotions p where code = any(array(select code from redeemed))
  on conflict (code) do update
  set times_redeemed = promotions.times_redeemed
    + (select count(*) from made where excluded.code in (select jsonb_array_elements_text(made.quote->'promoCodes')))
), numbered as materialized (
  select ranked.n, ranked.number_prefix || drawn.number as order_number
  from (select n, number_prefix, row_number() over (order by n) as rank from made) as ranked
  join (select number, row_number() over (order by number) as rank
        from (select nextval('order_numbers') as number from made) as numbers) as drawn on drawn.rank = ranked.rank
), new_order as (
  insert into orders (id, order_number, session_id, client_id, status, review_reasons, region_id, currency, subtotal,
                      discount, shipping, tax, total, amount_paid, paid_currency, amount_refunded, promo_codes,
                      buyer_email, processor, payment_reference, permalink_token, created_at, updated_at)
  select made.order_id, numbered.order_number, made.session_id, made.client_id,
         case when cardinality(reasons.list) > 0 then 'needs_review' else 'paid' end, reasons.list,
         made.quote->>'regionId', made.quote->>'currencyCode', (made.quote->'totals'->>'subtotal')::bigint,
         (made.quote->'totals'->>'discount')::bigint, (made.quote->'totals'->>'shipping')::bigint,
         (made.quote->'totals'->>'tax')::bigint, (made.quote->'totals'->>'total')::bigint, made.amount_paid,
         lower(made.currency), 0,
         array(select code from jsonb_array_elements_text(made.quote->'promoCodes') with ordinality as c (code, place)
               order by place),
         coalesce(made.buyer_email, made.session_buyer_email), made.processor, made.payment_reference,
         made.permalink_token, made.at, made.at
  from made join reasons on reasons.n = made.n join numbered on numbered.n = made.n
  order by made.n
  returning *
), new_lines as (
  insert into order_line_items (id, order_id, position, variant_id, title, quantity, unit_amount, base_amount,
                                discount, subtotal, tax, total)
  select line->>'id', new_order.id, place - 1, line->>'variantId', line->>'title', (line->>'quantity')::int,
         (line->>'unitAmount')::bigint, (line->>'baseAmount')::bigint, (line->>'discount')::bigint,
         (line->>'subtotal')::bigint, (line->>'tax')::bigint, (line->>'total')::bigint
  from new_order join made on made.order_id = new_order.id,
       jsonb_array_elements(made.quote->'lines') with ordinality as l (line, place)
), completed as (
  update carts set status = 'completed', completed_at = new_order.created_at, updated_at = new_order.created_at
  from new_order where carts.id = new_order.session_id
)
select payment.n, claimable.n is not null as claimable, event.event_id is not null as recorded,
  cart.status as cart_status, (ready.quote->'totals'->>'total')::bigint as quoted_total,
  ready.quote->>'currencyCode' as quoted_currency, new_order.*
from payment
  left join claimable on claimable.n = payment.n
  left join event on event.processor = payment.processor and event.event_id = payment.event_id
  left join cart on cart.id = payment.session_id
  left join ready on ready.n = payment.n
  left join new_order on new_order.id = payment.order_id
order by payment.n`;

/** A payment as one record of PAID_ORDERS's $1. */
function paidOrdersRecord(payment: PaymentToTake, n: number) {
  return {
    n,
    processor: payment.processor,
    event_id: payment.eventId,
    event_type: payment.eventType,
    at: payment.at,
    session_id: payment.sessionId,
    checkout_reference: payment.checkoutReference ?? null,
    quote_given: payment.quote ?? null,
    order_id: payment.orderId,
    number_prefix: payment.numberPrefix,
    permalink_token: payment.permalinkToken,
    amount_paid: payment.amountPaid,
    currency: payment.currency,
    buyer_email: payment.buyerEmail,
    payment_reference: payment.paymentReference,
  };
}

/** One payment, or many of distinct sessions and distinct events, in one statement (PAID_ORDERS), on `db`. */
async function payTogether(db: Db, payments: PaymentToTake[]): Promise<PaymentTaken[]> {
  const rows = await runPrepared<PaymentTakenRow & { n: number }>(db, 'paid_orders', PAID_ORDERS, [
    JSON.stringify(payments.map((payment, index) => paidOrdersRecord(payment, index + 1))),
  ]);
  // Each payment's row by its number, whatever order and count the rows come in.
  const byNumber = new Map(rows.map(({ n, ...row }) => [n, row]));
  return payments.map((_, index) => {
    const row = byNumber.get(index + 1);
    if (!row) throw new Error(`PAID_ORDERS returned no row for payment ${index + 1}`);
    return paymentTaken(row);
  });
}

/**
 * The batch cut, in its order, into runs in which no session and no event comes twice: a payment that meets an
 * earlier one of its run starts the next, so it sees what the earlier one wrote, as it would paid after it.
 */
function runsOfDistinctPayments(payments: PaymentToTake[]): PaymentToTake[][] {
  const runs: PaymentToTake[][] = [];
  let seen = new Set<string>();
  for (const payment of payments) {
    const keys = [`session ${payment.sessionId}`, `event ${payment.processor} ${payment.eventId}`];
    if (!runs.length || keys.some((key) => seen.has(key))) {
      runs.push([]);
      seen = new Set();
    }
    runs.at(-1)!.push(payment);
    keys.forEach((key) => seen.add(key));
  }
  return runs;
}

/**
 * Locks, before a batch's first run, every row its runs will lock, each kind in key order and the kinds in
 * PAID_ORDERS's order: the sessions, then the stock of every variant the quotes name, then their promotions ($1: the
 * batch's paidOrdersRecord array). Runs in one transaction lock one run after another: without this, a later run
 * would lock a session after an earlier run had locked stock, the reverse of every other statement, and could
 * deadlock with one (a deadlock resolved only after deadlock_timeout, by a retry of every member alone). The events
 * are not locked: an event is only ever recorded under its own session's lock, which is held here.
 */
export const PAYMENT_LOCKS = `with payment as materialized (
  select * from ${PAYMENTS}
), cart as materialized (
  select id from carts where id = any(array(select session_id from payment)) order by id for update
), quote as materialized (
  -- read once the sessions are locked, as PAID_ORDERS reads it
  select ${QUOTE_PAID} as quote
  from payment
  where (select count(*) from cart) >= 0
), stock as materialized (
  select id from variants
  where id = any(array(select line->>'variantId' from quote, jsonb_array_elements(quote.quote->'lines') as line))
  order by id
  for no key update
), promotion as materialized (
  select code from promotions
  where code = any(array(select jsonb_array_elements_text(quote.quote->'promoCodes') from quote))
  order by code
  for no key update
)
select (select count(*) from cart) as carts, (select count(*) from stock) as stock,
  (select count(*) from promotion) as promotions`;

/**
 * A batch of payments, all or none: one statement, on its own, when no session and no event comes twice; otherwise
 * one statement per run (runsOfDistinctPayments), in order, in one transaction (a run failing after another had
 * committed would have the batch's retry find the first run's events recorded, and answer them as duplicates) that
 * first takes every lock of its runs (PAYMENT_LOCKS).
 */
async function payMany(db: Db, payments: PaymentToTake[]): Promise<PaymentTaken[]> {
  const runs = runsOfDistinctPayments(payments);
  if (runs.length === 1) return payTogether(db, payments);
  return db.transaction(async (trx) => {
    await runPrepared(trx, 'payment_locks', PAYMENT_LOCKS, [
      JSON.stringify(payments.map((payment, index) => paidOrdersRecord(payment, index + 1))),
    ]);
    const paid: PaymentTaken[] = [];
    for (const run of runs) paid.push(...(await payTogether(trx, run)));
    return paid;
  });
}

/**
 * Concurrent payments share a statement and a commit (src/db/batching.ts): a lone payment goes at once, alone; under
 * load each statement carries the payments that queued while MAX_PAYMENT_STATEMENTS_IN_FLIGHT ran. Every order of a
 * variant waits for its stock row through the commit of the order before: one commit for many orders instead of one
 * each is what lets more orders through.
 */
const MAX_PAYMENT_STATEMENTS_IN_FLIGHT = 2;
const MAX_PAYMENTS_PER_STATEMENT = 16;
const paymentBatcher = batchedPerDatabase<PaymentToTake, PaymentTaken>((db) => ({
  one: async (payment) => (await payTogether(db, [payment]))[0]!,
  many: (payments) => payMany(db, payments),
  maxBatch: MAX_PAYMENTS_PER_STATEMENT,
  maxInFlight: MAX_PAYMENT_STATEMENTS_IN_FLIGHT,
}));

/**
 * Takes a payment in one statement (PAID_ORDERS), on the pool (not inside a transaction): alone, or with concurrent
 * payments, with the outcome it would have alone, paid after those before it in the batch.
 * A batch that fails is retried payment by payment, alone, so each gets the outcome and the error it would get alone.
 */
export function pay(db: Db, payment: PaymentToTake): Promise<PaymentTaken> {
  return paymentBatcher(db)(payment);
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
