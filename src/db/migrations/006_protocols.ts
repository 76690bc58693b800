import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  // What the ACP and UCP bindings accept beyond the legacy contract, stored with the session (never used for pricing):
  // the buyer's names and phone (`buyer_email` stays where it is), and ACP's fulfillment details, echoed as sent.
  await db.schema.alterTable('carts', (t) => {
    t.jsonb('buyer_details');
    t.jsonb('fulfillment_details');
  });

  // Idempotency records of the protocol bindings. Unlike `idempotency_keys`, the answer is kept as the exact bytes
  // sent (a replay must be byte-identical, and jsonb reorders keys), with the headers that belong to it.
  await db.schema.createTable('protocol_idempotency', (t) => {
    t.text('scope').notNullable(); // "{protocol}|{identity}|{operation}"
    t.text('key').notNullable();
    t.text('request_hash').notNullable(); // SHA-256 of the RFC 8785 (JCS) form of the parsed body
    t.text('state').notNullable().checkIn(['in_flight', 'completed']);
    t.integer('status_code');
    t.text('response_body');
    t.jsonb('response_headers');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.primary(['scope', 'key']);
    t.index(['expires_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.dropTableIfExists('protocol_idempotency');
  await db.schema.alterTable('carts', (t) => {
    t.dropColumn('buyer_details');
    t.dropColumn('fulfillment_details');
  });
}
