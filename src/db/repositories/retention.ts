// One bounded batch of each retention purge. Rows are picked with FOR UPDATE SKIP LOCKED, so instances sweeping at
// the same time take different rows instead of waiting on each other, and a row a request is writing is left for the
// next sweep. Each function returns how many rows it deleted.
import type { Db } from '../knex.js';

async function deleted(result: Promise<{ rows: Array<{ n: number }> }>): Promise<number> {
  return (await result).rows[0]?.n ?? 0;
}

export function deleteExpiredIdempotencyRecords(db: Db, now: Date, batch: number): Promise<number> {
  return deleted(
    db.raw(
      `WITH doomed AS (SELECT scope, key FROM idempotency_keys WHERE expires_at <= ? LIMIT ? FOR UPDATE SKIP LOCKED),
       gone AS (DELETE FROM idempotency_keys i USING doomed d WHERE i.scope = d.scope AND i.key = d.key RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [now, batch],
    ),
  );
}

export function deleteTokensExpiredBefore(db: Db, before: Date, batch: number): Promise<number> {
  return deleted(
    db.raw(
      `WITH doomed AS (SELECT token_hash FROM oauth_tokens WHERE expires_at <= ? LIMIT ? FOR UPDATE SKIP LOCKED),
       gone AS (DELETE FROM oauth_tokens t USING doomed d WHERE t.token_hash = d.token_hash RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before, batch],
    ),
  );
}

/**
 * Clients registered before `before` that obtained no token since, with their (all older) tokens. A client with
 * webhook deliveries or orders is kept: those records name it.
 */
export function deleteIdleClients(db: Db, before: Date, batch: number): Promise<number> {
  return deleted(
    db.raw(
      `WITH doomed AS (
         SELECT c.id FROM oauth_clients c
         WHERE c.created_at < ?
           AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.client_id = c.id AND t.issued_at >= ?)
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.client_id = c.id)
           AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.client_id = c.id)
         LIMIT ? FOR UPDATE OF c SKIP LOCKED),
       tokens AS (DELETE FROM oauth_tokens t USING doomed d WHERE t.client_id = d.id),
       gone AS (DELETE FROM oauth_clients c USING doomed d WHERE c.id = d.id RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [before, before, batch],
    ),
  );
}

/**
 * Carts (and their lines) in `status` whose `column` is before `before`. A cart an order or a processor checkout
 * refers to is never deleted: it is the record of a payment.
 */
export function deleteCarts(
  db: Db,
  status: 'open' | 'canceled',
  column: 'updated_at' | 'canceled_at',
  before: Date,
  batch: number,
): Promise<number> {
  return deleted(
    db.raw(
      `WITH doomed AS (
         SELECT c.id FROM carts c
         WHERE c.status = ? AND c.?? < ?
           AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.session_id = c.id)
           AND NOT EXISTS (SELECT 1 FROM processor_checkouts p WHERE p.session_id = c.id)
         LIMIT ? FOR UPDATE OF c SKIP LOCKED),
       lines AS (DELETE FROM cart_line_items l USING doomed d WHERE l.cart_id = d.id),
       gone AS (DELETE FROM carts c USING doomed d WHERE c.id = d.id RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [status, column, before, batch],
    ),
  );
}

/** Revokes a client's live tokens beyond its `keep` most recently issued. */
export async function revokeTokensBeyond(db: Db, clientId: string, keep: number, now: Date): Promise<void> {
  await db.raw(
    `UPDATE oauth_tokens SET revoked_at = ?
     WHERE token_hash IN (
       SELECT token_hash FROM oauth_tokens
       WHERE client_id = ? AND revoked_at IS NULL AND expires_at > ?
       ORDER BY issued_at DESC, token_hash OFFSET ?)`,
    [now, clientId, now, keep],
  );
}
