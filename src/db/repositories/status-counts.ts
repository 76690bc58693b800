// What Prometheus' scrape reads from the database (src/metrics.ts): rows by status, and the webhook outbox's depth. One
// short transaction whose statements PostgreSQL cancels past `timeoutMs`, so a scrape never holds a connection long.
import type { StatusCounts } from '../../metrics.js';
import type { Db } from '../knex.js';

export async function readStatusCounts(db: Db, timeoutMs: number): Promise<StatusCounts> {
  return db.transaction(async (trx) => {
    await trx.raw(`set local statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const counted = (table: string, column: string) =>
      trx(table)
        .select({ status: column })
        .count({ count: '*' })
        .groupBy(column)
        .then((rows) =>
          (rows as Array<{ status: unknown; count: unknown }>).map((row) => ({
            status: String(row.status),
            count: Number(row.count),
          })),
        );
    const orders = await counted('orders', 'status');
    const sessions = await counted('carts', 'status');
    const refusedPayments = await counted('refused_payments', 'refund_state');
    const [outbox] = await trx('webhook_deliveries').whereNull('delivered_at').whereNull('failed_at').count({ n: '*' });
    return { orders, sessions, refusedPayments, outbox: Number(outbox?.n ?? 0) };
  });
}
