// The merchant's side (issue #35): an order's fulfilment status and cancellation, its shipments and refunds, and the
// audit trail of every admin change. Additive only (011 is another branch's).
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE orders DROP CONSTRAINT orders_status_check');
  await db.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check
       CHECK (status IN ('paid', 'needs_review', 'partially_refunded', 'refunded', 'canceled'))`,
  );
  await db.raw(`ALTER TABLE orders ADD COLUMN fulfilment_status text NOT NULL DEFAULT 'unfulfilled'
    CHECK (fulfilment_status IN ('unfulfilled', 'partially_shipped', 'shipped', 'delivered'))`);
  await db.raw('ALTER TABLE orders ADD COLUMN canceled_at timestamptz');
  await db.raw('CREATE INDEX orders_created ON orders (created_at, id)');

  // A shipment of some units of some lines; `lines` is [{line_id, quantity}].
  await db.schema.createTable('order_shipments', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.id');
    t.text('carrier').notNullable();
    t.text('tracking_number').notNullable();
    t.text('tracking_url');
    t.jsonb('lines').notNullable();
    t.timestamp('shipped_at', { useTz: true }).notNullable();
    t.timestamp('delivered_at', { useTz: true });
    t.index(['order_id']);
  });

  // A refund the merchant made (or a cancellation's), with what it put back in stock; `lines` is [{line_id, quantity}].
  await db.schema.createTable('order_refunds', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.id');
    t.bigInteger('amount').notNullable();
    t.text('currency').notNullable();
    t.text('reason');
    t.boolean('restocked').notNullable();
    t.jsonb('lines').notNullable();
    t.text('processor').notNullable();
    t.text('processor_reference');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['order_id']);
  });

  // Every admin change: who (the OAuth client), when, which operation on what, and the values before and after.
  await db.schema.createTable('audit_events', (t) => {
    t.text('id').primary();
    t.text('client_id').notNullable();
    t.text('operation').notNullable();
    t.text('target_type').notNullable();
    t.text('target_id').notNullable();
    t.jsonb('before');
    t.jsonb('after');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['created_at', 'id']);
    t.index(['target_type', 'target_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  for (const table of ['audit_events', 'order_refunds', 'order_shipments']) await db.schema.dropTableIfExists(table);
  await db.raw('DROP INDEX IF EXISTS orders_created');
  await db.raw('ALTER TABLE orders DROP COLUMN IF EXISTS canceled_at');
  await db.raw('ALTER TABLE orders DROP COLUMN IF EXISTS fulfilment_status');
  await db.raw('ALTER TABLE orders DROP CONSTRAINT orders_status_check');
  await db.raw(
    `ALTER TABLE orders ADD CONSTRAINT orders_status_check
       CHECK (status IN ('paid', 'needs_review', 'partially_refunded', 'refunded'))`,
  );
}
