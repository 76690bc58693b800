// The order-webhook outbox: events written in the transaction that changes an order, claimed and delivered later by
// any instance. A claim is a lease: an instance that dies mid-delivery leaves the row to be retried when it lapses.
import type { Db } from '../knex.js';

export interface DeliveryRow {
  id: string;
  client_id: string;
  type: string;
  payload: Record<string, unknown>;
  attempts: number;
  next_attempt_at: Date;
  delivered_at: Date | null;
  failed_at: Date | null;
  last_error: string | null;
  created_at: Date;
}

export type ClaimedDelivery = DeliveryRow & { webhook_url: string };

export async function webhookUrlOf(db: Db, clientId: string): Promise<string | undefined> {
  const row = (await db('oauth_clients').where({ id: clientId }).first('webhook_url')) as
    { webhook_url: string | null } | undefined;
  return row?.webhook_url ?? undefined;
}

export async function insertDelivery(
  db: Db,
  row: Omit<DeliveryRow, 'attempts' | 'delivered_at' | 'failed_at' | 'last_error'>,
): Promise<void> {
  await db('webhook_deliveries').insert({ ...row, payload: JSON.stringify(row.payload) });
}

/** Claims up to `limit` due deliveries for `leaseSeconds`; rows another instance is claiming right now are skipped. */
export async function claimDue(db: Db, now: Date, leaseSeconds: number, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = (await db.raw(
    `UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = ?::timestamptz + make_interval(secs => ?)
       FROM oauth_clients c
      WHERE c.id = d.client_id
        AND d.id IN (SELECT id FROM webhook_deliveries
                      WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ?
                      ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED)
  RETURNING d.*, c.webhook_url`,
    [now, leaseSeconds, now, limit],
  )) as { rows: ClaimedDelivery[] };
  return rows;
}

export async function markDelivered(db: Db, id: string, at: Date): Promise<void> {
  await db('webhook_deliveries').where({ id }).update({ delivered_at: at, last_error: null });
}

export async function markFailedAttempt(
  db: Db,
  id: string,
  error: string,
  retryAt: Date | undefined,
  at: Date,
): Promise<void> {
  await db('webhook_deliveries')
    .where({ id })
    .update(retryAt ? { last_error: error, next_attempt_at: retryAt } : { last_error: error, failed_at: at });
}
