// Destination tax and shipping options (issue #32): the rate table and each region's options, read when a session with
// a destination is priced, so a change to either is a new catalogue version like any other table a price is read
// from (the triggers of migrations 007 and 008). 009 is another branch's.
import type { Knex } from 'knex';

export const FULFILMENT_TABLES = ['tax_rates', 'shipping_options'];

/** The seeded regions whose shelf prices include tax (docs/fulfilment-and-tax.md). */
const TAX_INCLUSIVE_REGIONS = ['reg_eu', 'reg_gb', 'reg_jp'];

export async function up(db: Knex): Promise<void> {
  // Whether the region's shelf prices, and its shipping amounts, include tax. A fresh database gets the value from the
  // seed; one seeded before this migration gets it here (the seed inserts only what is missing).
  await db.raw('alter table regions add column prices_include_tax boolean not null default false');
  await db('regions').whereIn('id', TAX_INCLUSIVE_REGIONS).update({ prices_include_tax: true });

  // One tax levied on sales shipped to a country, or to one subdivision of it, from valid_from on: a change of rate
  // is a new row, so what an order was charged can be read again. Rates in thousandths of a percent (19 % = 19000,
  // Quebec's 9.975 % = 9975).
  await db.raw(`create table tax_rates (
    id text primary key,
    country text not null check (country ~ '^[A-Z]{2}$'),
    subdivision text check (subdivision is null or subdivision like country || '-%'),
    jurisdiction text not null,
    tax_code text not null check (tax_code in ('SALES_TAX', 'VAT', 'GST', 'HST', 'PST', 'QST', 'CONSUMPTION_TAX')),
    name text not null,
    rate integer not null check (rate between 0 and 100000),
    shipping_taxable boolean not null,
    valid_from date not null
  )`);
  await db.raw(`create unique index tax_rates_one_per_day
    on tax_rates (country, coalesce(subdivision, ''), tax_code, valid_from)`);

  await db.raw(`create table shipping_options (
    region_id text not null references regions (id),
    code text not null check (code in ('standard', 'express')),
    title text not null,
    description text not null,
    amount integer not null check (amount >= 0),
    free_shipping_threshold integer check (free_shipping_threshold >= 0),
    min_business_days integer not null check (min_business_days >= 0),
    max_business_days integer not null check (max_business_days >= min_business_days),
    rank integer not null,
    primary key (region_id, code)
  )`);

  for (const table of FULFILMENT_TABLES) {
    await db.raw(`create constraint trigger ${table}_bump_catalog_version
      after insert or update or delete on ${table}
      deferrable initially deferred
      for each row execute function bump_catalog_version()`);
    await db.raw(`create trigger ${table}_truncate_bumps_catalog_version
      after truncate on ${table}
      for each statement execute function bump_catalog_version()`);
  }
}

export async function down(db: Knex): Promise<void> {
  await db.raw('drop table if exists shipping_options');
  await db.raw('drop table if exists tax_rates');
  await db.raw('alter table regions drop column if exists prices_include_tax');
}
