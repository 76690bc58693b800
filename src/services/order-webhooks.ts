// Order events for agents: `order.created` / `order.updated` (and, beside them, the protocols' order events of
// src/services/order-events.ts, each signed as its audience's protocol says), written to the outbox in the transaction that changes
// the order and delivered by whichever instance claims them first, signed, with retries and backoff. Delivery is
// at-least-once (a receiver dedupes on the event id); a crash mid-delivery is retried when the claim's lease lapses.
// Every delivery goes through the egress guard (src/services/egress.ts): a webhook URL whose name resolves to a private
// address is refused when sent, as a literal one is at registration.
import * as repo from '../db/repositories/webhooks.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { MAX_ATTEMPTS, retryDelaySeconds, signatureHeader, webhookSecret } from '../domain/webhooks.js';
import { acpSignatureHeaders, ucpWebhookHeaders } from '../domain/order-events.js';
import { createEgress } from './egress.js';

export type OrderEventType = 'order.created' | 'order.updated';

const POLL_INTERVAL_MS = 1_000;
/** Deliveries claimed per poll, all endpoints together. */
const BATCH = 20;
/** Deliveries in flight to one endpoint from one instance. */
export const DELIVERIES_PER_ENDPOINT = 4;
/** Due deliveries a poll ranks, oldest first (a dead endpoint's backlog is not sorted whole every second). */
const SCAN = 500;

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
  const id = deps.ids.next('evt');
  const at = new Date(deps.now());
  await repo.insertDelivery(db, {
    id,
    client_id: clientId,
    type,
    payload: { id, type, created_at: at.toISOString(), data: { order } },
    next_attempt_at: at,
    created_at: at,
    traceparent: deps.tracing?.outboundHeaders().traceparent ?? null,
  });
}

/** Endpoints (webhook URLs) and what this instance holds of each: deliveries sending, and claimed ones waiting. */
interface EndpointLoad {
  sending: number;
  waiting: repo.ClaimedDelivery[];
}

/**
 * Delivers claimed webhooks, each endpoint on its own: at most DELIVERIES_PER_ENDPOINT deliveries in flight to one endpoint, the
 * rest of its claims waiting for a slot, so an endpoint that hangs holds only its own deliveries (each ends at the
 * timeout) while the others' go out as soon as they are claimed.
 */
export interface WebhookDelivery {
  /** Claims what is due (for endpoints not already full here) and starts it; returns how many it claimed. */
  round(): Promise<number>;
  /** Resolves when every delivery started so far has ended. */
  settled(): Promise<void>;
}

export function createWebhookDelivery(deps: Deps): WebhookDelivery {
  const { agentWebhookKey: key, webhookTimeoutMs, egressAllowedHosts } = deps.config;
  const { tracing } = deps;
  const egress = createEgress(egressAllowedHosts, undefined, tracing);
  // A claim is held for two deliveries' time (one waiting for a slot, then its own) and a margin: never taken over.
  const leaseSeconds = Math.ceil((2 * webhookTimeoutMs) / 1000) + 50;
  const endpoints = new Map<string, EndpointLoad>();
  const running = new Set<Promise<void>>();

  /**
   * A delivery, with tracing on: a span of its own (the root of a trace: it runs in the background, not in a request),
   * linked to the request that wrote the event, parent of the call out (which carries its traceparent) and of its
   * statements.
   */
  function traced(delivery: repo.ClaimedDelivery, signingKey: string): Promise<void> {
    const cause = delivery.traceparent ? tracing?.linkTo(delivery.traceparent) : undefined;
    const span = tracing?.startSpan('deliver order webhook', {
      kind: 'internal',
      root: true,
      attributes: { 'storefront.webhook_delivery_id': delivery.id, 'storefront.webhook_attempt': delivery.attempts },
      links: cause ? [cause] : [],
    });
    if (!span) return deliver(delivery, signingKey);
    return tracing!
      .within(span, () => deliver(delivery, signingKey))
      .then(
        () => span.end(),
        (error: unknown) => {
          span.end(error);
          throw error;
        },
      );
  }

  /** The delivery's signed headers, as its audience's protocol says (src/domain/order-events.ts for UCP and ACP). */
  function signedHeaders(delivery: repo.ClaimedDelivery, signingKey: string, body: string): Record<string, string> {
    const seconds = Math.floor(deps.now() / 1000);
    switch (delivery.audience) {
      case 'ucp':
        return ucpWebhookHeaders(deps.ucpSigningKey!, {
          url: delivery.webhook_url,
          body,
          webhookId: delivery.id,
          profileUrl: `${deps.config.baseUrl}/.well-known/ucp`,
          createdSeconds: seconds,
          occurredSeconds: Math.floor(new Date(delivery.created_at).getTime() / 1000),
        });
      case 'acp':
        return {
          'Content-Type': 'application/json',
          'Webhook-Id': delivery.id,
          ...acpSignatureHeaders(webhookSecret(signingKey, delivery.client_id!), new Date(deps.now()), body),
        };
      default:
        return {
          'Content-Type': 'application/json',
          'Webhook-Id': delivery.id,
          'Webhook-Signature': signatureHeader(webhookSecret(signingKey, delivery.client_id!), seconds, body),
        };
    }
  }

  async function deliver(delivery: repo.ClaimedDelivery, signingKey: string): Promise<void> {
    const body = JSON.stringify(delivery.payload);
    const answer = await egress.send(delivery.webhook_url, {
      method: 'POST',
      timeoutMs: webhookTimeoutMs,
      maxResponseBytes: 0,
      headers: { 'User-Agent': 'storefront-webhooks/1', ...signedHeaders(delivery, signingKey, body) },
      body,
    });
    if (answer.ok && answer.status >= 200 && answer.status < 300) {
      deps.metrics?.webhookDeliveries.labels('delivered').inc();
      return repo.markDelivered(deps.db, delivery.id, new Date(deps.now()));
    }
    const problem = answer.ok ? `HTTP ${answer.status}` : `${answer.failure}: ${answer.detail}`;
    const retryAt =
      delivery.attempts < MAX_ATTEMPTS ? new Date(deps.now() + retryDelaySeconds(delivery.attempts) * 1000) : undefined;
    deps.metrics?.webhookDeliveries.labels(retryAt ? 'retried' : 'gave_up').inc();
    deps.log.warn(
      { delivery: delivery.id, clientId: delivery.client_id, attempts: delivery.attempts, problem, giveUp: !retryAt },
      'order webhook not delivered',
    );
    await repo.markFailedAttempt(deps.db, delivery.id, problem.slice(0, 500), retryAt, new Date(deps.now()));
  }

  /** Starts the endpoint's waiting deliveries while it has a free slot; each one's end starts the next. */
  function pump(url: string, load: EndpointLoad, signingKey: string): void {
    while (load.sending < DELIVERIES_PER_ENDPOINT && load.waiting.length > 0) {
      const delivery = load.waiting.shift()!;
      load.sending += 1;
      const sent: Promise<void> = traced(delivery, signingKey)
        .catch((error: unknown) => {
          deps.metrics?.webhookDeliveries.labels('error').inc();
          deps.log.warn({ err: error, delivery: delivery.id }, 'order webhook failed');
        })
        .finally(() => {
          running.delete(sent);
          load.sending -= 1;
          if (load.sending === 0 && load.waiting.length === 0) endpoints.delete(url);
          else pump(url, load, signingKey);
        });
      running.add(sent);
    }
  }

  return {
    async round() {
      if (!key) return 0;
      const full = [...endpoints].filter(([, load]) => load.sending + load.waiting.length >= DELIVERIES_PER_ENDPOINT);
      const claimed = await repo.claimDue(deps.db, new Date(deps.now()), leaseSeconds, {
        limit: BATCH,
        perEndpoint: DELIVERIES_PER_ENDPOINT,
        except: full.map(([url]) => url),
        scan: SCAN,
      });
      for (const delivery of claimed) {
        const url = delivery.webhook_url;
        let load = endpoints.get(url);
        if (!load) endpoints.set(url, (load = { sending: 0, waiting: [] }));
        load.waiting.push(delivery);
        pump(url, load, key);
      }
      return claimed.length;
    },
    async settled() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/**
 * Polls the outbox in the background: each poll claims and starts what is due without waiting for deliveries in
 * flight (a slow endpoint delays only its own). The returned stop waits for the poll and the deliveries in progress.
 */
export function startWebhookDelivery(deps: Deps): () => Promise<void> {
  const delivery = createWebhookDelivery(deps);
  let claiming: Promise<unknown> = Promise.resolve();
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    claiming = delivery
      .round()
      .catch((error: unknown) => deps.log.warn({ err: error }, 'order webhook round failed'))
      .finally(() => (busy = false));
  }, POLL_INTERVAL_MS);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await claiming;
    await delivery.settled();
  };
}
