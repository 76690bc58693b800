// Publishing (issue #35): a product the merchant unpublished stays stored, with its orders' history, but leaves the
// catalogue and can no longer be bought. products is a catalogue table (007), so a change bumps the catalogue version.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE products ADD COLUMN published boolean NOT NULL DEFAULT true');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE products DROP COLUMN IF EXISTS published');
}
