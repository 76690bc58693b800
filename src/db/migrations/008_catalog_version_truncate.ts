import type { Knex } from 'knex';
import { CATALOG_TABLES } from './007_catalog_version.js';

export async function up(db: Knex): Promise<void> {
  // Row triggers do not fire on TRUNCATE: a statement trigger bumps the version for it. It cannot be deferred, and
  // needs not be: TRUNCATE already holds the table exclusively until its transaction ends.
  for (const table of CATALOG_TABLES)
    await db.raw(`create trigger ${table}_truncate_bumps_catalog_version
      after truncate on ${table}
      for each statement execute function bump_catalog_version()`);
}

export async function down(db: Knex): Promise<void> {
  for (const table of CATALOG_TABLES)
    await db.raw(`drop trigger if exists ${table}_truncate_bumps_catalog_version on ${table}`);
}
