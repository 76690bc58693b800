// The paid-order write: every payment decided and written by one statement (PAID_ORDERS), alone or batched.
import { batchedPerDatabase, runPrepared, type Db } from '../knex.js';
import type { CartRow } from './carts.js';
import type { OrderRow } from './orders.js';
import { fallsShort, heldAt, LIMITED, lockedStockAndPromotions } from './payment-limits.js';
import type { PaymentTaken, PaymentToTake, RefusalReason } from './payments.js';

/** A row of PAID_ORDERS: the payment's outcome, and its order if it made one. */
type PaymentTakenRow = Partial<OrderRow> & {
  claimable: boolean;
  recorded: boolean;
  cart_status: CartRow['status'] | null;
  quoted_total: number | null;
  quoted_currency: string | null;
  refusals: RefusalReason[] | null;
};

function paymentTaken(row: PaymentTakenRow): PaymentTaken {
  const { claimable, recorded, cart_status, quoted_total, quoted_currency, refusals, ...order } = row;
  if (!claimable) return { kind: 'needs_transaction' };
  if (!recorded) return { kind: 'duplicate' };
  if (cart_status === 'completed') return { kind: 'completed' };
  if (refusals?.length) return { kind: 'refused', reasons: refusals };
  return { kind: 'created', order: order as OrderRow, quoted: { total: quoted_total!, currency: quoted_currency! } };
}

/** The payments of PAID_ORDERS and PAYMENT_LOCKS: $1, a JSON array of paidOrdersRecord. */
const PAYMENTS = `jsonb_to_recordset($1::jsonb) as p (n int, processor text, event_id text, event_type text,
    at timestamptz, session_id text, checkout_reference text, quote_given jsonb, order_id text, number_prefix text,
    permalink_token text, amount_paid bigint, currency text, buyer_email text, payment_reference text,
    tells_agent boolean)`;

/** The quote a row `payment` of PAYMENTS pays: the one given, or else the one sent to the processor. */
const QUOTE_PAID = `coalesce(payment.quote_given, (select quote from processor_checkouts c
                                    where c.processor = payment.processor and c.reference = payment.checkout_reference
                                      and c.session_id = payment.session_id))`;

/**
 * Every payment, of every processor, is decided and written by this one statement (the rules of payment are written
 * here only): run on its own (autocommit) for one payment or for many of distinct sessions and distinct events ($1: a
 * JSON array of paidOrdersRecord, one per payment, `n` from 1, so the text is fixed whatever the batch holds), or
 * inside the transaction of a payment that needs JavaScript too (src/services/orders.ts). For each payment: the
 * session locked, the event recorded, the quote paid (the one given, or else the one sent to the processor under its
 * checkout reference) read, its variants and promotions locked FOR NO KEY UPDATE (./payment-limits.ts), and, if the event was
 * new, the payment either taken or refused.
 *
 * A payment is taken only if the store can honour it (`walk`): its session not cancelled, the stock of every variant
 * kept without backorder covering its quantity, and every promotion with a usage limit having a use left, where what
 * is held for other sessions' open processor checkouts (payment_holds, read after the locks through
 * live_payment_holds) is not there to take, unless its own session's hold covers all it takes (then it needs only
 * the stock or the uses to be there: holds outnumber them only when an operator lowered them since). Taken, it writes the stock left, the
 * redemptions, the order numbered from the sequence (`needs_review` with its reasons when the amount or currency paid
 * is not the quote's), its lines, and its session completed. Refused, it is recorded in refused_payments for its
 * processor to refund (its processor checkout, paid, is never offered again), and nothing else changes. Either way
 * the session's holds are released. One round trip and one
 * commit for every payment it carries, and the stock rows, which every order of a variant takes, are held for this
 * statement only. Each payment's outcome is what it would be had the payments been paid one after another in the
 * order given: the walk goes through them in that order, carrying what is left free of each variant and promotion.
 *
 * A payment goes ahead only where nothing but SQL is needed (`ready`): a session awaiting payment (or cancelled
 * meanwhile) whose quote is known and whose agent, if any, takes no order events, nor a protocol audience (a UCP
 * platform's subscription or an ACP client, `carts.origin`), or whose caller tells them
 * (`tells_agent`). Then, or for a session completed already, the event is recorded (`claimable`); otherwise nothing is
 * written for it, and the caller runs it again in a transaction, with the quote priced now or the agent told. The
 * session is locked before the event is recorded: a concurrent payment of the same session waits here and then finds
 * it completed (its locked row is the latest), so it records its own event and makes no order. The locks are taken
 * each kind in key order (the sessions by id, the events by key, the stock by id, the promotions by code), so two
 * instances' statements cannot deadlock (a batch of several runs takes them all first: PAYMENT_LOCKS).
 *
 * The stock left and the redemptions are written as upserts that always meet their row (the row itself inserted
 * again, `on conflict do update`): each row is locked first (`stock`, `promotion`), so none can be deleted meanwhile
 * and inserted again by the upsert. Under load this statement waits for those rows, which other orders changed after
 * it began; an UPDATE would then recheck each (EvalPlanQual), setting up every part of this statement's plan again:
 * about 0.4 ms of PostgreSQL CPU per order (bench/orders.ts, 1.56 against 1.17 ms). An upsert's update takes the row's
 * latest version as it is, and the quantities come from `stock`, read from the rows as locked. The stock and
 * promotion locks, what is limited, the holds read and the rule of a shortfall are composed from ./payment-limits.ts,
 * which the pay page's hold statement shares. Exported so that tests can count
 * the statements sent. Its SQL comments hold no colon and no quote: the bench replays it through pgbench
 * (bench/order-transaction.ts), which reads `:name` as a variable even there.
 */
export const PAID_ORDERS = `with recursive payment as materialized (
  select * from ${PAYMENTS}
), cart as materialized (
  select id, status, client_id, buyer_email, origin from carts
  where id = any(array(select session_id from payment))
  order by id
  for update
), ready as materialized (
  select payment.n, cart.status, cart.client_id, cart.buyer_email as session_buyer_email, paid.quote
  from payment join cart on cart.id = payment.session_id,
    lateral (select ${QUOTE_PAID} as quote) as paid
  where cart.status in ('ready_for_payment', 'canceled') and paid.quote is not null
    and (payment.tells_agent
         or (not exists (select from oauth_clients c where c.id = cart.client_id and c.webhook_url is not null)
             and coalesce(cart.origin->>'webhook_url', cart.origin->>'client_id') is null))
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
), ${lockedStockAndPromotions(
  'array(select id from wanted)',
  "array(select jsonb_array_elements_text(quote->'promoCodes') from made)",
)}, ${LIMITED}, ${heldAt('(select max(at) from payment)')}, step as materialized (
  select row_number() over (order by n) as k, n, session_id, status, quote from made
), claim as materialized (
  -- what each payment takes of what is limited, keyed by kind and name, and how much of that its own session holds
  select wants.n, wants.kind || ':' || wants.name as key, wants.quantity, coalesce(sum(held.quantity), 0) as own
  from (select n, 'variant' as kind, id as name, quantity from wanted
        union all
        select made.n, 'promotion', code, 1 from made, jsonb_array_elements_text(made.quote->'promoCodes') as code)
       as wants
    join limited on limited.kind = wants.kind and limited.name = wants.name
    join step on step.n = wants.n
    left join held on held.session_id = step.session_id and held.kind = wants.kind and held.name = wants.name
  group by wants.n, wants.kind, wants.name, wants.quantity
), walk (k, stock_left, holds_left, refusals) as (
  -- in payment order, what is left of each limited thing, and how much of that is held for sessions yet to pay
  select 0::bigint,
    (select coalesce(jsonb_object_agg(kind || ':' || name, available), '{}') from limited),
    (select coalesce(jsonb_object_agg(limited.kind || ':' || limited.name,
                                      (select coalesce(sum(held.quantity), 0) from held
                                       where held.kind = limited.kind and held.name = limited.name)), '{}')
     from limited),
    '{}'::text[]
  union all
  select step.k, next.stock_left, next.holds_left, verdict.refusals
  from walk join step on step.k = walk.k + 1,
    lateral (select array(select distinct split_part(claim.key, ':', 1) from claim
                          where claim.n = step.n
                            and ${fallsShort({
                              quantity: 'claim.quantity',
                              available: '(walk.stock_left->>claim.key)::bigint',
                              heldByOthers: '(walk.holds_left->>claim.key)::bigint - claim.own',
                              ownHeld: 'claim.own',
                            })}) as short) as shortfall,
    lateral (select array_remove(array[
        case when step.status = 'canceled' then 'session_canceled' end,
        case when 'variant' = any(shortfall.short) then 'insufficient_stock' end,
        case when 'promotion' = any(shortfall.short) then 'promotion_exhausted' end
      ], null) as refusals) as verdict,
    lateral (select
      (select coalesce(jsonb_object_agg(left_.key, left_.value::bigint
              - case when cardinality(verdict.refusals) > 0 then 0
                     else coalesce((select claim.quantity from claim where claim.n = step.n and claim.key = left_.key), 0)
                end), '{}')
       from jsonb_each_text(walk.stock_left) as left_) as stock_left,
      -- the holds of its session are released, whether it was taken or not
      (select coalesce(jsonb_object_agg(held_.key, held_.value::bigint
              - coalesce((select claim.own from claim where claim.n = step.n and claim.key = held_.key), 0)), '{}')
       from jsonb_each_text(walk.holds_left) as held_) as holds_left
    ) as next
), verdict as materialized (
  select step.n, walk.refusals from walk join step on step.k = walk.k
), accepted as materialized (
  select made.* from made join verdict on verdict.n = made.n where cardinality(verdict.refusals) = 0
), reasons as materialized (
  select accepted.n, array_remove(array[
      case when lower(accepted.currency) <> lower(accepted.quote->>'currencyCode') then 'currency_mismatch'
           when accepted.amount_paid <> (accepted.quote->'totals'->>'total')::bigint then 'amount_mismatch' end
    ], null) as list
  from accepted
), taken_quantity as materialized (
  select id, sum(quantity) as quantity from wanted where n in (select n from accepted) group by id
), taken as (
  insert into variants select v.* from variants v
  where id = any(array(select id from stock where manage_inventory and id in (select id from taken_quantity)))
  on conflict (id) do update
  set inventory_quantity = (
    select case when stock.allow_backorder then stock.inventory_quantity - taken_quantity.quantity
                else greatest(stock.inventory_quantity - taken_quantity.quantity, 0) end
    from stock join taken_quantity on taken_quantity.id = stock.id where stock.id = excluded.id)
), redemptions as (
  insert into promotions select p.* from promotions p
  where code = any(array(select code from promotion
                         where code in (select jsonb_array_elements_text(quote->'promoCodes') from accepted)))
  on conflict (code) do update
  set times_redeemed = promotions.times_redeemed
    + (select count(*) from accepted where excluded.code in (select jsonb_array_elements_text(accepted.quote->'promoCodes')))
), numbered as materialized (
  select ranked.n, ranked.number_prefix || drawn.number as order_number
  from (select n, number_prefix, row_number() over (order by n) as rank from accepted) as ranked
  join (select number, row_number() over (order by number) as rank
        from (select nextval('order_numbers') as number from accepted) as numbers) as drawn on drawn.rank = ranked.rank
), new_order as (
  insert into orders (id, order_number, session_id, client_id, status, review_reasons, region_id, currency, subtotal,
                      discount, shipping, tax, total, amount_paid, paid_currency, amount_refunded, promo_codes,
                      buyer_email, processor, payment_reference, permalink_token, created_at, updated_at,
                      fulfilment)
  select accepted.order_id, numbered.order_number, accepted.session_id, accepted.client_id,
         case when cardinality(reasons.list) > 0 then 'needs_review' else 'paid' end, reasons.list,
         accepted.quote->>'regionId', accepted.quote->>'currencyCode', (accepted.quote->'totals'->>'subtotal')::bigint,
         (accepted.quote->'totals'->>'discount')::bigint, (accepted.quote->'totals'->>'shipping')::bigint,
         (accepted.quote->'totals'->>'tax')::bigint, (accepted.quote->'totals'->>'total')::bigint, accepted.amount_paid,
         lower(accepted.currency), 0,
         array(select code from jsonb_array_elements_text(accepted.quote->'promoCodes') with ordinality as c (code, place)
               order by place),
         coalesce(accepted.buyer_email, accepted.session_buyer_email), accepted.processor, accepted.payment_reference,
         accepted.permalink_token, accepted.at, accepted.at, accepted.quote->'fulfilment'
  from accepted join reasons on reasons.n = accepted.n join numbered on numbered.n = accepted.n
  order by accepted.n
  returning *
), new_lines as (
  insert into order_line_items (id, order_id, position, variant_id, title, quantity, unit_amount, base_amount,
                                discount, subtotal, tax, total)
  select line->>'id', new_order.id, place - 1, line->>'variantId', line->>'title', (line->>'quantity')::int,
         (line->>'unitAmount')::bigint, (line->>'baseAmount')::bigint, (line->>'discount')::bigint,
         (line->>'subtotal')::bigint, (line->>'tax')::bigint, (line->>'total')::bigint
  from new_order join accepted on accepted.order_id = new_order.id,
       jsonb_array_elements(accepted.quote->'lines') with ordinality as l (line, place)
), refused as (
  insert into refused_payments (processor, payment_reference, session_id, event_id, reasons, amount, currency,
                                refund_state, created_at, updated_at)
  select made.processor, made.payment_reference, made.session_id, made.event_id, verdict.refusals, made.amount_paid,
         lower(made.currency), 'pending', made.at, made.at
  from made join verdict on verdict.n = made.n
  where cardinality(verdict.refusals) > 0
  on conflict (processor, payment_reference) do nothing
), spent as (
  -- the checkout a refused payment was made through was paid, so it is never offered again
  update processor_checkouts c set expires_at = made.at
  from made join verdict on verdict.n = made.n
  where cardinality(verdict.refusals) > 0 and c.processor = made.processor and c.reference = made.checkout_reference
    and c.session_id = made.session_id and c.expires_at > made.at
), released as (
  delete from payment_holds where session_id = any(array(select session_id from made))
), completed as (
  update carts set status = 'completed', completed_at = new_order.created_at, updated_at = new_order.created_at
  from new_order where carts.id = new_order.session_id
)
select payment.n, claimable.n is not null as claimable, event.event_id is not null as recorded,
  cart.status as cart_status, (ready.quote->'totals'->>'total')::bigint as quoted_total,
  ready.quote->>'currencyCode' as quoted_currency, verdict.refusals, new_order.*
from payment
  left join claimable on claimable.n = payment.n
  left join event on event.processor = payment.processor and event.event_id = payment.event_id
  left join cart on cart.id = payment.session_id
  left join ready on ready.n = payment.n
  left join verdict on verdict.n = payment.n
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
    tells_agent: payment.tellsAgent ?? false,
  };
}

/** One payment, or many of distinct sessions and distinct events, in one statement (PAID_ORDERS), on `db`. */
export async function payTogether(db: Db, payments: PaymentToTake[]): Promise<PaymentTaken[]> {
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
), ${lockedStockAndPromotions(
  "array(select line->>'variantId' from quote, jsonb_array_elements(quote.quote->'lines') as line)",
  "array(select jsonb_array_elements_text(quote.quote->'promoCodes') from quote)",
)}
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
const paymentBatcher = batchedPerDatabase<PaymentToTake, PaymentTaken>('payment_take', (db) => ({
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
