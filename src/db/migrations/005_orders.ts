import type { Knex } from 'knex';

// Payments and orders. A session becomes an order when its payment is reported (processor webhook or the built-in
// test processor): the order keeps every amount exactly as charged, in minor units, so it never changes when prices
// or promotions do. Processor event ids are recorded once each, which makes every delivery of an event exactly-once.
export async function up(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE carts DROP CONSTRAINT carts_status_check');
  await db.raw(
    `ALTER TABLE carts ADD CONSTRAINT carts_status_check CHECK (status IN ('open', 'ready_for_payment', 'canceled', 'completed'))`,
  );
  await db.schema.alterTable('carts', (t) => {
    t.timestamp('completed_at', { useTz: true });
  });

  // Order numbers are shown to people: short, sequential, never reused.
  await db.raw('CREATE SEQUENCE order_numbers START WITH 1001');
  await db.schema.createTable('orders', (t) => {
    t.text('id').primary();
    t.text('order_number').notNullable().unique();
    t.text('session_id').notNullable().unique().references('carts.id');
    t.text('client_id'); // the OAuth client whose cart this was (agent orders); null for public sessions
    t.text('status').notNullable().checkIn(['paid', 'needs_review', 'partially_refunded', 'refunded']);
    // Why a person must look at it: amount_mismatch, currency_mismatch, insufficient_stock, session_canceled.
    t.specificType('review_reasons', 'text[]').notNullable().defaultTo('{}');
    t.text('region_id').notNullable();
    t.text('currency').notNullable();
    t.bigInteger('subtotal').notNullable();
    t.bigInteger('discount').notNullable();
    t.bigInteger('shipping').notNullable();
    t.bigInteger('tax').notNullable();
    t.bigInteger('total').notNullable();
    t.bigInteger('amount_paid').notNullable(); // as the processor reported it, in paid_currency
    t.text('paid_currency').notNullable();
    t.bigInteger('amount_refunded').notNullable().defaultTo(0);
    t.specificType('promo_codes', 'text[]').notNullable().defaultTo('{}'); // applied, canonical
    t.text('buyer_email');
    t.text('processor').notNullable(); // stripe | test
    t.text('payment_reference').notNullable(); // e.g. the Stripe PaymentIntent id
    t.text('permalink_token').notNullable().unique(); // the buyer's unguessable receipt URL
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.unique(['processor', 'payment_reference']);
    t.index(['client_id']);
  });

  await db.schema.createTable('order_line_items', (t) => {
    t.text('id').primary(); // the session's line id
    t.text('order_id').notNullable().references('orders.id');
    t.integer('position').notNullable();
    t.text('variant_id').notNullable();
    t.text('title').notNullable();
    t.integer('quantity').notNullable();
    t.bigInteger('unit_amount').notNullable();
    t.bigInteger('base_amount').notNullable();
    t.bigInteger('discount').notNullable();
    t.bigInteger('subtotal').notNullable();
    t.bigInteger('tax').notNullable();
    t.bigInteger('total').notNullable();
    t.unique(['order_id', 'position']);
  });

  // Every processor event handled, once: a redelivery (or a concurrent one on another instance) finds its id here.
  await db.schema.createTable('processor_events', (t) => {
    t.text('processor').notNullable();
    t.text('event_id').notNullable();
    t.text('type').notNullable();
    t.timestamp('received_at', { useTz: true }).notNullable();
    t.primary(['processor', 'event_id']);
  });

  // The processor checkouts made for a session, each with the quote it charges; the latest is reused while the quote
  // is unchanged. Older ones are kept: a buyer may still pay one from an old tab, and the order records what it charged.
  await db.schema.createTable('processor_checkouts', (t) => {
    t.text('processor').notNullable();
    t.text('session_id').notNullable().references('carts.id');
    t.text('quote_hash').notNullable();
    t.jsonb('quote').notNullable(); // the priced cart sent to the processor: what the order records when it is paid
    t.text('reference').notNullable(); // e.g. the Stripe Checkout Session id
    t.text('url').notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['processor', 'reference']);
    t.index(['session_id', 'created_at']);
  });

  // Order events for agents: written in the transaction that changes the order, delivered later (transactional outbox).
  await db.schema.alterTable('oauth_clients', (t) => {
    t.text('webhook_url');
  });
  await db.schema.createTable('webhook_deliveries', (t) => {
    t.text('id').primary(); // the event id agents see, stable across retries
    t.text('client_id').notNullable().references('oauth_clients.id');
    t.text('type').notNullable(); // order.created | order.updated
    t.jsonb('payload').notNullable();
    t.integer('attempts').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable();
    t.timestamp('delivered_at', { useTz: true });
    t.timestamp('failed_at', { useTz: true }); // gave up after the last retry
    t.text('last_error');
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await db.raw(
    'CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE delivered_at IS NULL AND failed_at IS NULL',
  );
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['webhook_deliveries', 'processor_checkouts', 'processor_events', 'order_line_items', 'orders'])
    await db.schema.dropTableIfExists(table);
  await db.raw('DROP SEQUENCE IF EXISTS order_numbers');
  await db.schema.alterTable('oauth_clients', (t) => t.dropColumn('webhook_url'));
  await db.schema.alterTable('carts', (t) => t.dropColumn('completed_at'));
  await db.raw('ALTER TABLE carts DROP CONSTRAINT carts_status_check');
  await db.raw(
    `ALTER TABLE carts ADD CONSTRAINT carts_status_check CHECK (status IN ('open', 'ready_for_payment', 'canceled'))`,
  );
}
