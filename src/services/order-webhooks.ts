// Order events for agents: `order.created` / `order.updated`, written to the outbox in the transaction that changes
// the order and delivered by whichever instance claims them first, signed, with retries and backoff. Delivery is
// at-least-once (a receiver dedupes on the event id); a crash mid-delivery is retried when the claim's lease lapses.
import * as repo from '../db/repositories/webhooks.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { newId } from '../domain/ids.js';
import { MAX_ATTEMPTS, retryDelaySeconds, signatureHeader, webhookSecret } from '../domain/webhooks.js';

export type OrderEventType = 'order.created' | 'order.updated';

const POLL_INTERVAL_MS = 1_000;
const DELIVERY_TIMEOUT_MS = 5_000;
/** Longer than a delivery can take, so a live claim is never taken over. */
const LEASE_SECONDS = 60;
const BATCH = 20;

/** Whether the client registered a webhook URL (so its orders' events are worth writing). */
export async function wantsOrderEvents(db: Db, clientId: string): Promise<boolean> {
  return (await repo.webhookUrlOf(db, clientId)) !== undefined;
}

/** Writes the event to the outbox; `db` is the transaction that changed the order. */
export async function enqueueOrderEvent(
  db: Db,
  deps: Deps,
  clientId: string,
  type: OrderEventType,
  order: Record<string, unknown>,
): Promise<void> {
  const id = newId('evt');
  const at = new Date(deps.now());
  await repo.insertDelivery(db, {
    id,
    client_id: clientId,
    type,
    payload: { id, type, created_at: at.toISOString(), data: { order } },
    next_attempt_at: at,
    created_at: at,
  });
}

async function deliver(deps: Deps, key: string, delivery: repo.ClaimedDelivery): Promise<void> {
  const body = JSON.stringify(delivery.payload);
  let problem: string;
  try {
    const response = await fetch(delivery.webhook_url, {
      method: 'POST',
      redirect: 'manual',
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'storefront-webhooks/1',
        'Webhook-Id': delivery.id,
        'Webhook-Signature': signatureHeader(
          webhookSecret(key, delivery.client_id),
          Math.floor(deps.now() / 1000),
          body,
        ),
      },
      body,
    });
    await response.body?.cancel();
    if (response.ok) return repo.markDelivered(deps.db, delivery.id, new Date(deps.now()));
    problem = `HTTP ${response.status}`;
  } catch (error) {
    problem = error instanceof Error ? error.message : String(error);
  }
  const retryAt =
    delivery.attempts < MAX_ATTEMPTS ? new Date(deps.now() + retryDelaySeconds(delivery.attempts) * 1000) : undefined;
  deps.log.warn(
    { delivery: delivery.id, clientId: delivery.client_id, attempts: delivery.attempts, problem, giveUp: !retryAt },
    'order webhook not delivered',
  );
  await repo.markFailedAttempt(deps.db, delivery.id, problem.slice(0, 500), retryAt, new Date(deps.now()));
}

/** Delivers what is due now; returns how many deliveries it attempted. */
export async function deliverDueWebhooks(deps: Deps): Promise<number> {
  const key = deps.config.agentWebhookKey;
  if (!key) return 0;
  const claimed = await repo.claimDue(deps.db, new Date(deps.now()), LEASE_SECONDS, BATCH);
  await Promise.all(claimed.map((delivery) => deliver(deps, key, delivery)));
  return claimed.length;
}

/** Polls the outbox in the background; the returned stop waits for a round in progress. */
export function startWebhookDelivery(deps: Deps): () => Promise<void> {
  let round: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    round = deliverDueWebhooks(deps)
      .catch((error: unknown) => deps.log.warn({ err: error }, 'order webhook round failed'))
      .finally(() => (busy = false));
  }, POLL_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await round;
  };
}
