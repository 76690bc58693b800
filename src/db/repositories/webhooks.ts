// The order-webhook outbox: events written in the transaction that changes an order, claimed and delivered later by
// any instance. A claim is a lease: an instance that dies mid-delivery leaves the row to be retried when it lapses.
import type { Db } from '../knex.js';

/** Who a delivery is for, and so how it is signed: an agent client, a UCP platform, an ACP client. */
export type Audience = 'agent' | 'ucp' | 'acp';

export interface DeliveryRow {
  id: string;
  /** The client whose registered webhook URL receives it (agent, ACP); null for a UCP platform's (`target_url`). */
  client_id: string | null;
  /** Where it goes when that is not a client's registered URL (a UCP platform's subscription). */
  target_url: string | null;
  audience: Audience;
  type: string;
  payload: Record<string, unknown>;
  attempts: number;
  next_attempt_at: Date;
  delivered_at: Date | null;
  failed_at: Date | null;
  last_error: string | null;
  created_at: Date;
  /** The W3C traceparent of the request that wrote the event, when it was traced (its delivery links to it). */
  traceparent: string | null;
}

export type ClaimedDelivery = DeliveryRow & { webhook_url: string };

export async function webhookUrlOf(db: Db, clientId: string): Promise<string | undefined> {
  const row = (await db('oauth_clients').where({ id: clientId }).first('webhook_url')) as
    { webhook_url: string | null } | undefined;
  return row?.webhook_url ?? undefined;
}

export async function insertDelivery(
  db: Db,
  row: Omit<DeliveryRow, 'attempts' | 'delivered_at' | 'failed_at' | 'last_error' | 'target_url' | 'audience'> &
    Partial<Pick<DeliveryRow, 'target_url' | 'audience'>>,
): Promise<void> {
  await db('webhook_deliveries').insert({ ...row, payload: JSON.stringify(row.payload) });
}

export interface ClaimLimits {
  /** Deliveries claimed at most. */
  limit: number;
  /** Deliveries claimed at most per endpoint (webhook URL), oldest first. */
  perEndpoint: number;
  /** Endpoints to claim nothing for (busy on this instance). */
  except: string[];
  /** Due deliveries looked at, oldest first: bounds the ranking when a dead endpoint has a backlog. */
  scan: number;
}

/**
 * Claims due deliveries for `leaseSeconds`, at most `perEndpoint` per webhook URL (the delivery's `target_url`, or its
 * client's registered one) and none for the URLs in `except`, so
 * one endpoint's backlog never fills a batch; rows another instance is claiming right now are skipped.
 */
export async function claimDue(
  db: Db,
  now: Date,
  leaseSeconds: number,
  { limit, perEndpoint, except, scan }: ClaimLimits,
): Promise<ClaimedDelivery[]> {
  const { rows } = (await db.raw(
    `UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = ?::timestamptz + make_interval(secs => ?)
      WHERE d.id IN (
          SELECT id FROM webhook_deliveries
           WHERE id IN (
             SELECT ranked.id FROM (
               SELECT due.id, due.next_attempt_at,
                      row_number() OVER (PARTITION BY due.webhook_url ORDER BY due.next_attempt_at) AS place
                 FROM (SELECT w.id, w.next_attempt_at, coalesce(w.target_url, oc.webhook_url) AS webhook_url
                         FROM webhook_deliveries w LEFT JOIN oauth_clients oc ON oc.id = w.client_id
                        WHERE w.delivered_at IS NULL AND w.failed_at IS NULL AND w.next_attempt_at <= ?
                          AND coalesce(w.target_url, oc.webhook_url) IS NOT NULL
                          AND coalesce(w.target_url, oc.webhook_url) <> ALL(?::text[])
                        ORDER BY w.next_attempt_at LIMIT ?) due) ranked
              WHERE ranked.place <= ?
              ORDER BY ranked.next_attempt_at LIMIT ?)
             AND delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ?
           FOR UPDATE SKIP LOCKED)
  RETURNING d.*,
            coalesce(d.target_url, (SELECT c.webhook_url FROM oauth_clients c WHERE c.id = d.client_id)) AS webhook_url`,
    [now, leaseSeconds, now, except, scan, perEndpoint, limit, now],
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
