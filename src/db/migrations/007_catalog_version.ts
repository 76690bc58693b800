import type { Knex } from 'knex';

/** The tables a create reads (NEW_CART_READS, its idempotency records aside): a change to any is a new version. */
export const CATALOG_TABLES = ['regions', 'region_countries', 'products', 'variants', 'variant_prices', 'promotions'];

export async function up(db: Knex): Promise<void> {
  // One counter of committed changes to what a create reads, so that a create priced from an earlier read (the
  // service keeps the last read of each set of references) is stored only if nothing changed since: its insert compares
  // the version it was priced at with this one in the same statement (src/db/repositories/carts.ts).
  await db.raw(`create table catalog_version (
    singleton boolean primary key default true check (singleton),
    version bigint not null
  )`);
  await db.raw('insert into catalog_version (version) values (1)');
  await db.raw(`create function bump_catalog_version() returns trigger language plpgsql as $$
    begin
      update catalog_version set version = version + 1;
      return null;
    end $$`);
  // Deferred to commit: a transaction takes the counter's row lock last, after every row lock it needed, so two
  // transactions changing rows in different orders never wait on each other through it.
  for (const table of CATALOG_TABLES)
    await db.raw(`create constraint trigger ${table}_bump_catalog_version
      after insert or update or delete on ${table}
      deferrable initially deferred
      for each row execute function bump_catalog_version()`);
}

export async function down(db: Knex): Promise<void> {
  for (const table of CATALOG_TABLES) await db.raw(`drop trigger if exists ${table}_bump_catalog_version on ${table}`);
  await db.raw('drop function if exists bump_catalog_version()');
  await db.raw('drop table if exists catalog_version');
}
