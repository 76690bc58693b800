// A session's destination and shipping choice, and what an order was charged for them (issue #32). The cart keeps the
// checked address and the chosen option; the order keeps, as charged, the address, the option and the tax by
// jurisdiction (the quote's `fulfilment`, docs/fulfilment-and-tax.md), so a later change of rate changes no order.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('alter table carts add column shipping_address jsonb');
  await db.raw("alter table carts add column shipping_option text check (shipping_option in ('standard', 'express'))");
  await db.raw('alter table orders add column fulfilment jsonb');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('alter table orders drop column if exists fulfilment');
  await db.raw('alter table carts drop column if exists shipping_option');
  await db.raw('alter table carts drop column if exists shipping_address');
}
