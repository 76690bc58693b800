import type { Knex } from 'knex';

// Payment never takes money the store cannot honour (README "Payments").
//
// payment_holds: the units of stock and the promotion uses a session's open processor checkout may take, held from
// when the checkout is made until it expires, the session is cancelled or its payment is taken. A hold counts while it
// has not expired and its session still awaits payment, so a cancel releases it by changing the session alone.
//
// refused_payments: a payment that arrived for a session the store could no longer honour (cancelled, or its stock or
// promotion taken meanwhile): recorded with why, and refunded through its processor (`refund_state`).
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('payment_holds', (t) => {
    t.text('session_id').notNullable().references('carts.id').onDelete('CASCADE');
    t.text('kind').notNullable().checkIn(['variant', 'promotion']);
    t.text('name').notNullable(); // the variant id or the promotion's code
    t.integer('quantity').notNullable(); // units of the variant; 1 for a promotion
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['session_id', 'kind', 'name']);
    t.index(['kind', 'name', 'expires_at']);
  });
  // The live holds on some variants and promotions, read by a statement after it has locked their rows: VOLATILE, so
  // its query takes a snapshot of its own (PostgreSQL's rule for volatile functions) and sees a hold committed while
  // the statement that calls it waited for those locks, which the calling statement's own snapshot would miss.
  await db.raw(`create function live_payment_holds(variant_ids text[], codes text[], at timestamptz)
    returns table (session_id text, kind text, name text, quantity int)
    language sql volatile
    as $$
      select h.session_id, h.kind, h.name, h.quantity
      from payment_holds h join carts c on c.id = h.session_id
      where ((h.kind = 'variant' and h.name = any(variant_ids)) or (h.kind = 'promotion' and h.name = any(codes)))
        and h.expires_at > at and c.status = 'ready_for_payment'
    $$`);

  await db.schema.createTable('refused_payments', (t) => {
    t.text('processor').notNullable();
    t.text('payment_reference').notNullable(); // e.g. the Stripe PaymentIntent id: what the refund names
    t.text('session_id').notNullable().references('carts.id');
    t.text('event_id').notNullable(); // the processor event that reported it first
    // session_canceled, insufficient_stock, promotion_exhausted
    t.specificType('reasons', 'text[]').notNullable();
    t.bigInteger('amount').notNullable();
    t.text('currency').notNullable();
    t.text('refund_state').notNullable().checkIn(['pending', 'refunded']);
    t.text('refund_reference'); // the processor's refund id, once made
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.primary(['processor', 'payment_reference']);
    t.index(['session_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('refused_payments');
  await db.raw('drop function if exists live_payment_holds(text[], text[], timestamptz)');
  await db.schema.dropTableIfExists('payment_holds');
}
