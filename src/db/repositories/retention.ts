// One bounded batch of each retention purge. Rows are picked with FOR UPDATE SKIP LOCKED, so instances sweeping at
// the same time take different rows instead of waiting on each other, and a row a request is writing is left for the
// next sweep. Each function returns how many rows it deleted.
import type { Knex } from 'knex';
import type { Db } from '../knex.js';

interface Purge {
  /** The table rows are deleted from; `where` refers to it as `x`. */
  table: string;
  /** The columns that identify one of its rows. */
  key: string[];
  /** Which rows go, over `x`, with `?` placeholders bound from `bindings`. */
  where: string;
  bindings: Knex.RawBinding[];
  /** Rows of other tables that name a doomed row and go with it: the table and its column holding the (single) key. */
  dependents?: Array<{ table: string; column: string }>;
}

/** Deletes at most `batch` rows matching `purge.where`, with their dependents, in one statement; returns how many. */
async function deleteBatch(db: Db, purge: Purge, batch: number): Promise<number> {
  const dependents = purge.dependents ?? [];
  const { rows } = (await db.raw(
    `WITH doomed AS (SELECT ${purge.key.map(() => 'x.??').join(', ')} FROM ?? x WHERE ${purge.where}
                     LIMIT ? FOR UPDATE OF x SKIP LOCKED),
     ${dependents.map((_, i) => `dependent${i} AS (DELETE FROM ?? y USING doomed d WHERE y.?? = d.??),`).join(' ')}
     gone AS (DELETE FROM ?? x USING doomed d WHERE ${purge.key.map(() => 'x.?? = d.??').join(' AND ')} RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [
      ...purge.key,
      purge.table,
      ...purge.bindings,
      batch,
      ...dependents.flatMap(({ table, column }) => [table, column, purge.key[0]!]),
      purge.table,
      ...purge.key.flatMap((column) => [column, column]),
    ],
  )) as { rows: Array<{ n: number }> };
  return rows[0]?.n ?? 0;
}

/** Idempotency records past their `expires_at`: the legacy API's (`idempotency_keys`) or the bindings' own. */
export function deleteExpiredIdempotencyRecords(
  db: Db,
  table: 'idempotency_keys' | 'protocol_idempotency',
  now: Date,
  batch: number,
): Promise<number> {
  return deleteBatch(db, { table, key: ['scope', 'key'], where: 'x.expires_at <= ?', bindings: [now] }, batch);
}

export function deleteTokensExpiredBefore(db: Db, before: Date, batch: number): Promise<number> {
  return deleteBatch(
    db,
    { table: 'oauth_tokens', key: ['token_hash'], where: 'x.expires_at <= ?', bindings: [before] },
    batch,
  );
}

/**
 * Clients registered before `before` that obtained no token since, with their (all older) tokens. A client with
 * webhook deliveries or orders is kept: those records name it.
 */
export function deleteIdleClients(db: Db, before: Date, batch: number): Promise<number> {
  return deleteBatch(
    db,
    {
      table: 'oauth_clients',
      key: ['id'],
      where: `x.created_at < ?
        AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.client_id = x.id AND t.issued_at >= ?)
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries w WHERE w.client_id = x.id)
        AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.client_id = x.id)`,
      bindings: [before, before],
      dependents: [{ table: 'oauth_tokens', column: 'client_id' }],
    },
    batch,
  );
}

/**
 * Carts (and their lines, holds and expired processor checkouts) in `status` whose `column` is before `before`. A cart
 * an order or a refused payment refers to is never deleted: it is the record of a payment; nor one with a processor
 * checkout that can still be paid at `now`.
 */
export function deleteCarts(
  db: Db,
  status: 'open' | 'ready_for_payment' | 'canceled',
  column: 'updated_at' | 'canceled_at',
  before: Date,
  now: Date,
  batch: number,
): Promise<number> {
  return deleteBatch(
    db,
    {
      table: 'carts',
      key: ['id'],
      where: `x.status = ? AND x.?? < ?
        AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.session_id = x.id)
        AND NOT EXISTS (SELECT 1 FROM refused_payments r WHERE r.session_id = x.id)
        AND NOT EXISTS (SELECT 1 FROM processor_checkouts p WHERE p.session_id = x.id AND p.expires_at > ?)`,
      bindings: [status, column, before, now],
      dependents: [
        { table: 'cart_line_items', column: 'cart_id' },
        { table: 'processor_checkouts', column: 'session_id' },
        { table: 'payment_holds', column: 'session_id' },
      ],
    },
    batch,
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
