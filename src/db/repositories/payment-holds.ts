// Holds on stock and promotion uses for a session's open processor checkout (payment_holds, migration 009): what the
// pay page checks and reserves before it asks the processor for a checkout, so that a payment made there can be
// honoured when it arrives. PAID_ORDERS (./orders.ts) checks again when it does, against the same holds.
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
