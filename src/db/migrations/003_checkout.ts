import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  // A checkout session is a cart; its id is the cart's id. `status` is the session status
  // (`open` is an agent cart not yet turned into a checkout session).
  await db.schema.createTable('carts', (t) => {
    t.text('id').primary();
    t.text('region_id').notNullable().references('regions.id');
    t.text('status').notNullable();
    t.text('buyer_email');
    t.specificType('promo_codes', 'text[]').notNullable().defaultTo('{}'); // as requested, in order
    t.text('client_id'); // the OAuth client owning an agent cart; null for public checkout sessions
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('canceled_at', { useTz: true });
  });
  await db.raw(
    `ALTER TABLE carts ADD CONSTRAINT carts_status_check CHECK (status IN ('open', 'ready_for_payment', 'canceled'))`,
  );

  await db.schema.createTable('cart_line_items', (t) => {
    t.text('id').primary();
    t.text('cart_id').notNullable().references('carts.id');
    t.text('variant_id').notNullable().references('variants.id');
    t.integer('quantity').notNullable().checkBetween([1, 100]);
    t.integer('position').notNullable();
    t.unique(['cart_id', 'variant_id']);
  });

  await db.schema.createTable('promotions', (t) => {
    t.text('code').primary(); // canonical (upper case)
    t.text('kind').notNullable().checkIn(['percentage', 'fixed']);
    t.integer('value').notNullable().checkPositive(); // basis points, or minor units of currency_code
    t.text('currency_code');
    t.integer('min_subtotal');
    t.timestamp('starts_at', { useTz: true });
    t.timestamp('ends_at', { useTz: true });
    t.integer('usage_limit');
    // Redemptions are counted by the order pipeline when a paid order uses the code (payment happens outside this
    // service); sessions only read it.
    t.integer('times_redeemed').notNullable().defaultTo(0);
  });
  await db.raw(
    `ALTER TABLE promotions ADD CONSTRAINT promotions_fixed_has_currency CHECK (kind <> 'fixed' OR currency_code IS NOT NULL)`,
  );

  // Idempotency-Key records. The primary key makes concurrent first requests race to one winner across instances.
  await db.schema.createTable('idempotency_keys', (t) => {
    t.text('scope').notNullable();
    t.text('key').notNullable();
    t.text('request_hash').notNullable();
    t.text('state').notNullable().checkIn(['in_flight', 'completed']);
    t.integer('status_code');
    t.jsonb('response_body');
    t.text('api_version');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['scope', 'key']);
    t.index(['expires_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['idempotency_keys', 'promotions', 'cart_line_items', 'carts'])
    await db.schema.dropTableIfExists(table);
}
