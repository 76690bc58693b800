// What a payment may take of what is limited (stock kept without backorder, promotion uses under a usage limit), as
// SQL text composed into the statements that decide it: PAID_ORDERS and PAYMENT_LOCKS (./paid-orders.ts) and the pay
// page's HOLD_FOR_CHECKOUT (./payment-holds.ts). Written once here, so that the lock order, what counts as limited,
// the holds counted and the rule of a shortfall cannot drift apart between the pay page and the payment.

/**
 * The CTEs `stock` and `promotion`: the variants `variantIds` and the promotions `promoCodes` (SQL text arrays) locked
 * FOR NO KEY UPDATE, each kind in key order and the stock before the promotions, in every statement that locks them
 * (so that two statements cannot deadlock). NO KEY: an order changes their counts, never their key, and a create
 * storing lines holds a FOR KEY SHARE lock on each line's variant in the order of its items; FOR UPDATE would wait for
 * those, and deadlock with a create holding the order's variants the other way round.
 */
export function lockedStockAndPromotions(variantIds: string, promoCodes: string): string {
  return `stock as materialized (
  select id, manage_inventory, allow_backorder, inventory_quantity from variants
  where id = any(${variantIds})
  order by id
  for no key update
), promotion as materialized (
  select code, usage_limit, times_redeemed from promotions
  where code = any(${promoCodes})
  order by code
  for no key update
)`;
}

/**
 * The CTE `limited` (kind, name, available), after lockedStockAndPromotions: what is taken only while some is left,
 * and how much is: the stock of a variant kept without backorder, the uses left of a promotion with a usage limit.
 */
export const LIMITED = `limited as materialized (
  select 'variant' as kind, id as name, inventory_quantity::bigint as available from stock
  where manage_inventory and not allow_backorder
  union all
  select 'promotion', code, (usage_limit - times_redeemed)::bigint from promotion where usage_limit is not null
)`;

/**
 * The CTE `held` (session_id, kind, name, quantity), after LIMITED: the live holds at `at` (SQL) on what is limited,
 * of every session, read after the rows are locked (live_payment_holds, volatile: a hold committed while the
 * statement waited for a lock counts).
 */
export function heldAt(at: string): string {
  return `held as materialized (
  select * from live_payment_holds(array(select name from limited where kind = 'variant'),
                                   array(select name from limited where kind = 'promotion'), ${at})
)`;
}

/**
 * The rule of a shortfall, as an SQL condition: `quantity` of a limited thing falls short when more than what is
 * `available` less what other sessions hold, since what others hold is not there to take; unless the session's own
 * hold (`ownHeld`) covers all it takes, when it needs only the quantity to be available (holds outnumber what is there
 * only when an operator lowered it since they were made).
 */
export function fallsShort(want: { quantity: string; available: string; heldByOthers: string; ownHeld: string }) {
  const { quantity, available, heldByOthers, ownHeld } = want;
  return `${quantity} > ${available} - case when ${ownHeld} >= ${quantity} then 0 else ${heldByOthers} end`;
}
