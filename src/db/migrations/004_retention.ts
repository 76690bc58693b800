import type { Knex } from 'knex';

// Indexes for the retention purges (src/services/retention.ts), so each batch finds its rows without a full scan.
export async function up(db: Knex): Promise<void> {
  await db.raw(`CREATE INDEX carts_open_idle ON carts (updated_at) WHERE status = 'open'`);
  await db.raw(`CREATE INDEX carts_canceled_at ON carts (canceled_at) WHERE status = 'canceled'`);
  await db.schema.alterTable('oauth_tokens', (t) => {
    t.index(['expires_at']);
    t.index(['client_id', 'issued_at']);
  });
  await db.schema.alterTable('oauth_clients', (t) => t.index(['created_at']));
}

export async function down(db: Knex): Promise<void> {
  await db.raw('DROP INDEX IF EXISTS carts_open_idle');
  await db.raw('DROP INDEX IF EXISTS carts_canceled_at');
  await db.schema.alterTable('oauth_tokens', (t) => {
    t.dropIndex(['expires_at']);
    t.dropIndex(['client_id', 'issued_at']);
  });
  await db.schema.alterTable('oauth_clients', (t) => t.dropIndex(['created_at']));
}
