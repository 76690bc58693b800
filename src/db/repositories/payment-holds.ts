// Holds on stock and promotion uses for a session's open processor checkout (payment_holds, migration 009): what the
// pay page checks and reserves before it asks the processor for a checkout, so that a payment made there can be
// honoured when it arrives. PAID_ORDERS (./paid-orders.ts) checks again when it does, against the same holds.
import type { Quote } from '../../domain/orders.js';
import { runPrepared, type Db } from '../knex.js';

export interface Shortfall {
  kind: 'variant' | 'promotion';
  /** The variant id or the promotion's code. */
  name: string;
}

/**
 * Checks a quote against the stock and the promotions' usage limits, less what is held for other sessions' open
 * checkouts (live_payment_holds, read after the rows are locked), in one statement: the same test PAID_ORDERS's walk
 * makes of a payment's step. When nothing falls short and `$5` (hold until) is given, the session's holds become
 * exactly this quote's, until then. Returns what falls short (then nothing is held). Locks the stock by id, then the
 * promotions by code, as PAID_ORDERS does; run after the session's own row is locked.
 */
const HOLD_FOR_CHECKOUT = `with wanted as materialized (
  select line->>'variantId' as id, sum((line->>'quantity')::int) as quantity
  from jsonb_array_elements($2::jsonb) as line
  group by 1
), stock as materialized (
  select id, manage_inventory, allow_backorder, inventory_quantity from variants
  where id = any(array(select id from wanted))
  order by id
  for no key update
), promotion as materialized (
  select code, usage_limit, times_redeemed from promotions
  where code = any($3::text[])
  order by code
  for no key update
), held as materialized (
  select * from live_payment_holds(array(select id from stock where manage_inventory and not allow_backorder),
                                   array(select code from promotion where usage_limit is not null), $4)
  where session_id <> $1
), short as materialized (
  select 'variant' as kind, stock.id as name from stock join wanted on wanted.id = stock.id
  where stock.manage_inventory and not stock.allow_backorder
    and wanted.quantity > stock.inventory_quantity
      - coalesce((select sum(held.quantity) from held where held.kind = 'variant' and held.name = stock.id), 0)
  union all
  select 'promotion', promotion.code from promotion
  where promotion.usage_limit is not null
    and promotion.usage_limit - promotion.times_redeemed
      - coalesce((select sum(held.quantity) from held where held.kind = 'promotion' and held.name = promotion.code), 0)
      < 1
), hold as materialized (
  select 'variant' as kind, stock.id as name, wanted.quantity from stock join wanted on wanted.id = stock.id
  where stock.manage_inventory and not stock.allow_backorder
  union all
  select 'promotion', code, 1 from promotion where usage_limit is not null
), kept as (
  insert into payment_holds (session_id, kind, name, quantity, expires_at)
  select $1, kind, name, quantity, $5 from hold
  where $5::timestamptz is not null and not exists (select from short)
  on conflict (session_id, kind, name) do update set quantity = excluded.quantity, expires_at = excluded.expires_at
), dropped as (
  delete from payment_holds h
  where h.session_id = $1 and $5::timestamptz is not null and not exists (select from short)
    and (h.kind, h.name) not in (select kind, name from hold)
)
select kind, name from short order by kind, name`;

/**
 * What of `quote` the store cannot honour now for `sessionId`; with `holdUntil`, and when nothing falls short, the
 * session holds the quote's stock and promotion uses until then. Inside the caller's transaction, after it has locked
 * the session.
 */
export async function holdForCheckout(
  db: Db,
  sessionId: string,
  quote: Quote,
  at: Date,
  holdUntil: Date | undefined,
): Promise<Shortfall[]> {
  return runPrepared<Shortfall>(db, 'hold_for_checkout', HOLD_FOR_CHECKOUT, [
    sessionId,
    JSON.stringify(quote.lines.map((line) => ({ variantId: line.variantId, quantity: line.quantity }))),
    quote.promoCodes,
    at,
    holdUntil ?? null,
  ]);
}

export type Reservation =
  /** Nothing falls short: held (when asked to hold). */
  | { kind: 'held' }
  /** The session no longer awaits payment (paid or cancelled meanwhile). */
  | { kind: 'not_ready' }
  /** The session has had `max` processor checkouts already: it gets no more. */
  | { kind: 'too_many_checkouts' }
  | { kind: 'unavailable'; shortfalls: Shortfall[] };

/**
 * Checks, and with `holdUntil` reserves, what a processor checkout of `quote` may take, in one transaction that first
 * locks the session (concurrent visits of its pay page, on any instance, reserve one after another) and bounds the
 * checkouts a session may have (`maxCheckouts`): each costs a call to the processor and a row.
 */
export function reserveForCheckout(
  db: Db,
  reservation: { sessionId: string; quote: Quote; at: Date; holdUntil?: Date; maxCheckouts?: number },
): Promise<Reservation> {
  const { sessionId, quote, at, holdUntil, maxCheckouts } = reservation;
  return db.transaction(async (trx): Promise<Reservation> => {
    const cart = (await trx('carts').where({ id: sessionId }).forUpdate().first('status')) as
      { status: string } | undefined;
    if (cart?.status !== 'ready_for_payment') return { kind: 'not_ready' };
    if (maxCheckouts !== undefined) {
      const [made] = (await trx('processor_checkouts').where({ session_id: sessionId }).count({ n: '*' })) as Array<{
        n: string | number;
      }>;
      if (Number(made!.n) >= maxCheckouts) return { kind: 'too_many_checkouts' };
    }
    const shortfalls = await holdForCheckout(trx, sessionId, quote, at, holdUntil);
    return shortfalls.length ? { kind: 'unavailable', shortfalls } : { kind: 'held' };
  });
}
