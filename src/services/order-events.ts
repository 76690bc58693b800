// Order events to the protocols' audiences (issue #31 item 4, issue #35 item 3). A session created through UCP keeps
// the platform that created it and where its profile subscribed to order events (the order capability's
// `config.webhook_url`); one created through ACP keeps its client. Every change of the order it becomes (created,
// refunded, shipped, delivered, canceled) is written to the same outbox as the agents' webhooks, in the transaction
// that changes the order, and delivered by the same loop (src/services/order-webhooks.ts), signed as each protocol
// says: UCP with an RFC 9421 signature under the business's published key, ACP with an HMAC under the client's secret.
import { randomUUID } from 'node:crypto';
import * as adminRepo from '../db/repositories/admin-orders.js';
import * as repo from '../db/repositories/webhooks.js';
import type { OrderLineRow, OrderRow } from '../db/repositories/orders.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import {
  acpOrderEvent,
  deriveUcpSigningKey,
  orderOriginOf,
  toUcpOrder,
  type OrderFacts,
  type OrderHappening,
  type UcpOrigin,
  type UcpSigningKey,
} from '../domain/order-events.js';
import { webhookUrlProblem } from '../domain/webhooks.js';
import type { Negotiated } from './ucp-profiles.js';
import { orderSummary } from './checkout.js';

/**
 * The business's UCP signing key, derived from AGENT_WEBHOOK_KEY (so every instance holds the same one and nothing is
 * stored); undefined without that key, when nothing is signed and no key is published. The service derives it once as
 * it starts (src/service.ts).
 */
export function ucpSigningKeyOf(config: Pick<Deps['config'], 'agentWebhookKey'>): UcpSigningKey | undefined {
  return config.agentWebhookKey ? deriveUcpSigningKey(config.agentWebhookKey) : undefined;
}

/**
 * A UCP session's origin: the platform's profile, the version it spoke, and its order-event subscription when the
 * profile declares the order capability with a `webhook_url` this service may send to (https, a public host).
 */
export function ucpOrigin(deps: Deps, profileUrl: string, negotiated: Negotiated): UcpOrigin {
  const url = negotiated.orderWebhookUrl;
  const usable =
    negotiated.order === true &&
    url !== undefined &&
    webhookUrlProblem(url, new Set(deps.config.egressAllowedHosts)) === undefined;
  return { protocol: 'ucp', profile: profileUrl, version: negotiated.version, webhook_url: usable ? url : null };
}

/** The order's facts (lines, shipments, refunds) as both protocols' views need them; undefined for an unknown id. */
export async function orderFacts(db: Db, deps: Deps, orderId: string): Promise<OrderFacts | undefined> {
  const order = await adminRepo.findOrder(db, orderId);
  if (!order) return undefined;
  const lines = (await db('order_line_items').where({ order_id: orderId }).orderBy('position')) as OrderLineRow[];
  const shipments = await adminRepo.shipmentsOf(db, orderId);
  const refunds = await adminRepo.refundsOf(db, orderId);
  return {
    id: order.id,
    orderNumber: order.order_number ? String(order.order_number) : null,
    sessionId: order.session_id,
    status: order.status,
    fulfilmentStatus: order.fulfilment_status,
    currency: order.currency,
    totals: {
      subtotal: order.subtotal,
      discount: order.discount,
      shipping: order.shipping,
      tax: order.tax,
      total: order.total,
    },
    amountRefunded: order.amount_refunded,
    permalinkUrl: orderSummary(deps, order).permalink_url,
    lines: lines.map((line) => ({
      id: line.id,
      variantId: line.variant_id,
      title: line.title,
      quantity: line.quantity,
      unitAmount: line.unit_amount,
      baseAmount: line.base_amount,
      discount: line.discount,
      tax: line.tax,
      total: line.total,
    })),
    shipments: shipments.map((shipment) => ({
      id: shipment.id,
      carrier: shipment.carrier,
      trackingNumber: shipment.tracking_number,
      trackingUrl: shipment.tracking_url,
      lines: shipment.lines,
      shippedAt: shipment.shipped_at,
      deliveredAt: shipment.delivered_at,
    })),
    refunds: refunds.map((refund) => ({
      id: refund.id,
      amount: refund.amount,
      currency: refund.currency,
      reason: refund.reason,
      lines: refund.lines,
      createdAt: refund.created_at,
    })),
    canceledAt: order.canceled_at,
  };
}

/** The origin of the session an order was paid from (undefined: not a protocol session). */
export async function originOfSession(db: Db, sessionId: string) {
  const row = (await db('carts').where({ id: sessionId }).first('origin')) as { origin: unknown } | undefined;
  return orderOriginOf(row?.origin);
}

/**
 * Writes the event for the order's protocol audience, if it has one, to the outbox; `db` is the transaction that
 * changed the order. A UCP platform that did not subscribe, an ACP client without a webhook URL, or a service without
 * AGENT_WEBHOOK_KEY (nothing can be signed) is told nothing.
 */
export async function tellProtocolAudience(
  db: Db,
  deps: Deps,
  order: OrderRow,
  happening: OrderHappening,
): Promise<void> {
  if (!deps.config.agentWebhookKey) return;
  const origin = await originOfSession(db, order.session_id);
  if (!origin) return;
  if (origin.protocol === 'ucp' && !origin.webhook_url) return;
  if (origin.protocol === 'acp' && (await repo.webhookUrlOf(db, origin.client_id)) === undefined) return;
  const facts = await orderFacts(db, deps, order.id);
  if (!facts) return;
  const at = new Date(deps.now());
  const common = {
    type: `order.${happening}`,
    next_attempt_at: at,
    created_at: at,
    traceparent: deps.tracing?.outboundHeaders().traceparent ?? null,
  };
  if (origin.protocol === 'ucp')
    // UCP's Webhook-Id is a UUID; the body is the order itself (rest.openapi.json `order_event_webhook`).
    await repo.insertDelivery(db, {
      ...common,
      id: randomUUID(),
      client_id: null,
      target_url: origin.webhook_url,
      audience: 'ucp',
      payload: toUcpOrder(facts, origin.version),
    });
  else
    await repo.insertDelivery(db, {
      ...common,
      id: deps.ids.next('evt'),
      client_id: origin.client_id,
      audience: 'acp',
      payload: acpOrderEvent(happening, facts),
    });
}
