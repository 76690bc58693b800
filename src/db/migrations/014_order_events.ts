// Order events to the protocols' audiences (issue #31 item 4, issue #35 item 3): a session created through UCP or ACP
// keeps who is told of the order it becomes (`carts.origin`), and the order-webhook outbox carries deliveries that are
// not an agent client's: a UCP platform's subscribed webhook URL (`target_url`, no client) or an ACP client's, each
// signed as its protocol says (`audience`).
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE carts ADD COLUMN origin jsonb');
  await db.raw('ALTER TABLE webhook_deliveries ALTER COLUMN client_id DROP NOT NULL');
  await db.raw('ALTER TABLE webhook_deliveries ADD COLUMN target_url text');
  await db.raw(
    `ALTER TABLE webhook_deliveries ADD COLUMN audience text NOT NULL DEFAULT 'agent'
       CHECK (audience IN ('agent', 'ucp', 'acp'))`,
  );
  await db.raw(
    `ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_target
       CHECK (client_id IS NOT NULL OR target_url IS NOT NULL)`,
  );
}

export async function down(db: Knex): Promise<void> {
  await db.raw('DELETE FROM webhook_deliveries WHERE client_id IS NULL');
  await db.raw('ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_target');
  await db.raw('ALTER TABLE webhook_deliveries DROP COLUMN audience');
  await db.raw('ALTER TABLE webhook_deliveries DROP COLUMN target_url');
  await db.raw('ALTER TABLE webhook_deliveries ALTER COLUMN client_id SET NOT NULL');
  await db.raw('ALTER TABLE carts DROP COLUMN origin');
}
