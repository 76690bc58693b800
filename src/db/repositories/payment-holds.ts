// Holds on stock and promotion uses for a session's open processor checkout (payment_holds, migration 009): what the
// pay page checks and reserves before it asks the processor for a checkout, so that a payment made there can be
// honoured when it arrives. PAID_ORDERS (./paid-orders.ts) checks again when it does, against the same holds.
import type { Quote } from '../../domain/orders.js';
import { runPrepared, type Db } from '../knex.js';
import { fallsShort, heldAt, LIMITED, lockedStockAndPromotions } from './payment-limits.js';

export interface Shortfall {
  kind: 'variant' | 'promotion';
  /** The variant id or the promotion's code. */
  name: string;
}

/**
 * Checks a quote against the stock and the promotions' usage limits, less what is held for other sessions' open
 * checkouts (live_payment_holds, read after the rows are locked), in one statement: the locks, what is limited, the
 * holds and the rule of a shortfall are PAID_ORDERS's (./payment-limits.ts), except that the session's own hold is
 * never counted as covering what it takes. When nothing falls short and `$5` (hold until) is given, the session's
 * holds become exactly this quote's, until then. Returns what falls short (then nothing is held). Run after the
 * session's own row is locked.
 */
const HOLD_FOR_CHECKOUT = `with wanted as materialized (
  select line->>'variantId' as id, sum((line->>'quantity')::int) as quantity
  from jsonb_array_elements($2::jsonb) as line
  group by 1
), ${lockedStockAndPromotions('array(select id from wanted)', '$3::text[]')}, ${LIMITED}, ${heldAt('$4')}, hold as materialized (
  -- what the quote takes of what is limited
  select limited.kind, limited.name, wants.quantity, limited.available
  from (select 'variant' as kind, id as name, quantity from wanted
        union all
        select distinct 'promotion', code, 1 from unnest($3::text[]) as code) as wants
    join limited on limited.kind = wants.kind and limited.name = wants.name
), short as materialized (
  select kind, name from hold
  where ${fallsShort({
    quantity: 'hold.quantity',
    available: 'hold.available',
    heldByOthers: `coalesce((select sum(held.quantity) from held
                             where held.kind = hold.kind and held.name = hold.name and held.session_id <> $1), 0)`,
    // the pay page counts every hold but the session's own, whatever that covers
    ownHeld: '0',
  })}
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
