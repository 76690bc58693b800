import type { Knex } from 'knex';

// OAuth clients registered through RFC 7591 and the access tokens issued to them. Secrets and tokens are stored only
// as SHA-256 hashes: a leaked table gives no usable credential.
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('oauth_clients', (t) => {
    t.text('id').primary();
    t.text('secret_hash').notNullable();
    t.text('name');
    t.text('scope').notNullable(); // space-separated, as registered
    t.timestamp('created_at', { useTz: true }).notNullable();
  });

  await db.schema.createTable('oauth_tokens', (t) => {
    t.text('token_hash').primary();
    t.text('client_id').notNullable().references('oauth_clients.id');
    t.text('scope').notNullable(); // space-separated, as granted
    t.timestamp('issued_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.index(['client_id']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('oauth_tokens');
  await db.schema.dropTableIfExists('oauth_clients');
}
