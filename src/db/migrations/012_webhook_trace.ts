// The trace an order webhook belongs with (issue #34): the W3C `traceparent` of the request whose transaction wrote the
// event (a payment, a refund), kept with the outbox row so that its delivery, later and on any instance, is linked to
// that request's span. Null when the service was not tracing.
import type { Knex } from 'knex';

export async function up(db: Knex): Promise<void> {
  await db.raw('alter table webhook_deliveries add column traceparent text');
}

export async function down(db: Knex): Promise<void> {
  await db.raw('alter table webhook_deliveries drop column traceparent');
}
