// Order events to the protocols' audiences, pure (issue #31 item 4): who a protocol session's order is told of (its
// origin), the order as UCP's `dev.ucp.shopping.order` and as ACP's webhook `Order` show it, and how each delivery is
// signed: UCP's with an RFC 9421 HTTP Message Signature (ES256 over a key published in the business profile), ACP's
// with an HMAC of the timestamp and the body under the client's webhook secret.
import { createECDH, createHash, createHmac, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { serializeDictionary, serializeInnerList } from 'structured-headers';
import type { UcpVersion } from './ucp-checkout.js';

export const UCP_ORDER = 'dev.ucp.shopping.order';

/** A UCP session: the platform (its profile), the version it spoke, and where it subscribed to order events. */
export interface UcpOrigin {
  protocol: 'ucp';
  profile: string;
  version: UcpVersion;
  /** The order capability's `config.webhook_url` in the platform's profile; null: not subscribed. */
  webhook_url: string | null;
}

/** An ACP session: the client whose bearer token created it (its registered webhook URL receives the events). */
export interface AcpOrigin {
  protocol: 'acp';
  client_id: string;
}

export type OrderOrigin = UcpOrigin | AcpOrigin;

export function acpOrigin(clientId: string): AcpOrigin {
  return { protocol: 'acp', client_id: clientId };
}

export function orderOriginOf(value: unknown): OrderOrigin | undefined {
  const origin = value as { protocol?: unknown; profile?: unknown; client_id?: unknown } | null | undefined;
  if (origin?.protocol === 'ucp' && typeof origin.profile === 'string') return origin as unknown as UcpOrigin;
  if (origin?.protocol === 'acp' && typeof origin.client_id === 'string') return origin as unknown as AcpOrigin;
  return undefined;
}

/** What happened to the order (the event), as the service names it. */
export type OrderHappening = 'created' | 'shipped' | 'delivered' | 'canceled' | 'refunded' | 'updated';

/** The facts of an order that both protocols' views are drawn from (integer minor units throughout). */
export interface OrderFacts {
  id: string;
  orderNumber: string | null;
  sessionId: string;
  status: string;
  fulfilmentStatus: string;
  currency: string;
  totals: { subtotal: number; discount: number; shipping: number; tax: number; total: number };
  amountRefunded: number;
  permalinkUrl: string;
  lines: Array<{
    id: string;
    variantId: string;
    title: string;
    quantity: number;
    unitAmount: number;
    /** Before discount; the line's discount (≥ 0) and tax; total = base − discount (+ tax unless included). */
    baseAmount: number;
    discount: number;
    tax: number;
    total: number;
  }>;
  shipments: Array<{
    id: string;
    carrier: string;
    trackingNumber: string;
    trackingUrl: string | null;
    lines: Array<{ line_id: string; quantity: number }>;
    shippedAt: Date;
    deliveredAt: Date | null;
  }>;
  refunds: Array<{
    id: string;
    amount: number;
    currency: string;
    reason: string | null;
    lines: Array<{ line_id: string; quantity: number }>;
    createdAt: Date;
  }>;
  canceledAt: Date | null;
}

const iso = (date: Date) => new Date(date).toISOString();

function shippedUnits(facts: OrderFacts): Map<string, number> {
  const units = new Map<string, number>();
  for (const shipment of facts.shipments)
    for (const line of shipment.lines) units.set(line.line_id, (units.get(line.line_id) ?? 0) + line.quantity);
  return units;
}

function lineStatus(quantity: number, fulfilled: number): 'processing' | 'partial' | 'fulfilled' | 'removed' {
  if (quantity === 0) return 'removed';
  if (fulfilled >= quantity) return 'fulfilled';
  return fulfilled > 0 ? 'partial' : 'processing';
}

/** UCP's Order (`dev.ucp.shopping.order`) in `version`: lines, shipments as fulfillment events, refunds as adjustments. */
export function toUcpOrder(facts: OrderFacts, version: UcpVersion) {
  const shipped = shippedUnits(facts);
  const events = facts.shipments.flatMap((shipment) => {
    const lineItems = shipment.lines.map((line) => ({ id: line.line_id, quantity: line.quantity }));
    const tracking = {
      carrier: shipment.carrier,
      tracking_number: shipment.trackingNumber,
      ...(shipment.trackingUrl ? { tracking_url: shipment.trackingUrl } : {}),
    };
    return [
      {
        id: `${shipment.id}_shipped`,
        occurred_at: iso(shipment.shippedAt),
        type: 'shipped',
        line_items: lineItems,
        ...tracking,
      },
      ...(shipment.deliveredAt
        ? [
            {
              id: `${shipment.id}_delivered`,
              occurred_at: iso(shipment.deliveredAt),
              type: 'delivered',
              line_items: lineItems,
              ...tracking,
            },
          ]
        : []),
    ];
  });
  const adjustments = [
    ...facts.refunds
      .filter((refund) => refund.amount > 0)
      .map((refund) => ({
        id: refund.id,
        type: 'refund',
        occurred_at: iso(refund.createdAt),
        status: 'completed' as const,
        ...(refund.lines.length
          ? { line_items: refund.lines.map((line) => ({ id: line.line_id, quantity: line.quantity })) }
          : {}),
        totals: [{ type: 'total', display_text: 'Refunded', amount: refund.amount }],
      })),
    ...(facts.canceledAt
      ? [
          {
            id: `${facts.id}_canceled`,
            type: 'cancellation',
            occurred_at: iso(facts.canceledAt),
            status: 'completed' as const,
          },
        ]
      : []),
  ];
  // Both are append-only logs (order.json): in the order things happened, not grouped by shipment or kind (a second
  // shipment may leave before the first is delivered). ISO timestamps of one format sort as text; the sort is stable.
  const byTime = (a: { occurred_at: string }, b: { occurred_at: string }) => a.occurred_at.localeCompare(b.occurred_at);
  events.sort(byTime);
  adjustments.sort(byTime);
  const { totals } = facts;
  return {
    ucp: { version, status: 'success' as const, capabilities: { [UCP_ORDER]: [{ version }] } },
    id: facts.id,
    ...(facts.orderNumber ? { label: facts.orderNumber } : {}),
    checkout_id: facts.sessionId,
    permalink_url: facts.permalinkUrl,
    line_items: facts.lines.map((line) => {
      const fulfilled = Math.min(shipped.get(line.id) ?? 0, line.quantity);
      return {
        id: line.id,
        item: { id: line.variantId, title: line.title, price: line.unitAmount },
        quantity: { original: line.quantity, total: line.quantity, fulfilled },
        // As the checkout's lines show them: the entries add up to the total (tax inside the prices is not added).
        totals: [
          { type: 'subtotal', display_text: 'Subtotal', amount: line.baseAmount },
          ...(line.discount > 0 ? [{ type: 'items_discount', display_text: 'Discount', amount: -line.discount }] : []),
          ...(line.tax > 0 && line.baseAmount - line.discount + line.tax === line.total
            ? [{ type: 'tax', display_text: 'Tax', amount: line.tax }]
            : []),
          { type: 'total', display_text: 'Total', amount: line.total },
        ],
        status: lineStatus(line.quantity, fulfilled),
      };
    }),
    fulfillment: { events },
    adjustments,
    currency: facts.currency.toUpperCase(),
    totals: [
      { type: 'subtotal', display_text: 'Subtotal', amount: totals.subtotal },
      ...(totals.discount > 0 ? [{ type: 'items_discount', display_text: 'Discount', amount: -totals.discount }] : []),
      { type: 'fulfillment', display_text: 'Shipping', amount: totals.shipping },
      { type: 'tax', display_text: 'Tax', amount: totals.tax },
      { type: 'total', display_text: 'Total', amount: totals.total },
    ],
  };
}

/** ACP's order status from the order's status and fulfilment. */
function acpStatus(facts: OrderFacts): string {
  if (facts.status === 'canceled') return 'canceled';
  if (facts.status === 'needs_review') return 'manual_review';
  if (facts.fulfilmentStatus === 'delivered') return 'completed';
  if (facts.fulfilmentStatus === 'shipped' || facts.fulfilmentStatus === 'partially_shipped') return 'shipped';
  return 'confirmed';
}

/** ACP's webhook `Order`: `type: "order"`, lines with quantities, shipments as fulfillments, refunds as adjustments. */
export function toAcpOrder(facts: OrderFacts) {
  const shipped = shippedUnits(facts);
  return {
    type: 'order' as const,
    id: facts.id,
    checkout_session_id: facts.sessionId,
    ...(facts.orderNumber ? { order_number: facts.orderNumber } : {}),
    permalink_url: facts.permalinkUrl,
    status: acpStatus(facts),
    line_items: facts.lines.map((line) => {
      const fulfilled = Math.min(shipped.get(line.id) ?? 0, line.quantity);
      return {
        id: line.id,
        title: line.title,
        quantity: { ordered: line.quantity, current: line.quantity, fulfilled },
        unit_price: line.unitAmount,
        subtotal: line.unitAmount * line.quantity,
        status: lineStatus(line.quantity, fulfilled),
      };
    }),
    fulfillments: facts.shipments.map((shipment) => ({
      id: shipment.id,
      type: 'shipping' as const,
      status: shipment.deliveredAt ? 'delivered' : 'shipped',
      line_items: shipment.lines.map((line) => ({ id: line.line_id, quantity: line.quantity })),
      carrier: shipment.carrier,
      tracking_number: shipment.trackingNumber,
      ...(shipment.trackingUrl ? { tracking_url: shipment.trackingUrl } : {}),
      events: [
        { id: `${shipment.id}_shipped`, type: 'shipped', occurred_at: iso(shipment.shippedAt) },
        ...(shipment.deliveredAt
          ? [{ id: `${shipment.id}_delivered`, type: 'delivered', occurred_at: iso(shipment.deliveredAt) }]
          : []),
      ],
    })),
    adjustments: facts.refunds
      .filter((refund) => refund.amount > 0)
      .map((refund) => ({
        id: refund.id,
        type: 'refund',
        occurred_at: iso(refund.createdAt),
        status: 'completed',
        ...(refund.lines.length
          ? { line_items: refund.lines.map((line) => ({ id: line.line_id, quantity: line.quantity })) }
          : {}),
        amount: refund.amount,
        currency: refund.currency.toLowerCase(),
        ...(refund.reason ? { description: refund.reason } : {}),
      })),
    totals: [
      { type: 'subtotal', display_text: 'Subtotal', amount: facts.totals.subtotal },
      ...(facts.totals.discount > 0
        ? [{ type: 'discount', display_text: 'Discount', amount: facts.totals.discount }]
        : []),
      { type: 'fulfillment', display_text: 'Shipping', amount: facts.totals.shipping },
      { type: 'tax', display_text: 'Tax', amount: facts.totals.tax },
      { type: 'total', display_text: 'Total', amount: facts.totals.total },
      ...(facts.amountRefunded > 0
        ? [{ type: 'amount_refunded', display_text: 'Refunded', amount: facts.amountRefunded }]
        : []),
    ],
  };
}

/** ACP's webhook event: `order_create` for a new order, `order_update` for every change after. */
export function acpOrderEvent(happening: OrderHappening, facts: OrderFacts) {
  return { type: happening === 'created' ? 'order_create' : 'order_update', data: toAcpOrder(facts) };
}

// ---------------------------------------------------------------------------------------------------------------
// Signing

/** ACP's headers: `Timestamp` (RFC 3339) and `Signature`, base64 HMAC-SHA256 of "<Timestamp>.<raw body>". */
export function acpSignatureHeaders(secret: string, at: Date, body: string): Record<string, string> {
  const timestamp = at.toISOString();
  return {
    Timestamp: timestamp,
    Signature: createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('base64'),
  };
}

/** The business's ES256 signing key, derived from the service's secret: every instance signs with the same key. */
export interface UcpSigningKey {
  kid: string;
  /** The public JWK as the business profile publishes it (`signing_keys` in 2026-04-08, `keys` in 2026-08-25). */
  publicJwk: { kid: string; kty: 'EC'; crv: 'P-256'; x: string; y: string; use: 'sig'; alg: 'ES256' };
  privateKey: KeyObject;
}

/** P-256's group order: a derived scalar must be below it (and above zero). */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

export function deriveUcpSigningKey(secret: string): UcpSigningKey {
  let counter = 0;
  let d: Buffer;
  do {
    d = createHmac('sha256', secret).update(`ucp-signing-key:${counter++}`).digest();
  } while (BigInt(`0x${d.toString('hex')}`) >= P256_ORDER || d.every((byte) => byte === 0));
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey(); // 0x04 || x || y
  const x = point.subarray(1, 33).toString('base64url');
  const y = point.subarray(33, 65).toString('base64url');
  // RFC 7638 thumbprint: the required members in lexicographic order, no whitespace.
  const kid = createHash('sha256')
    .update(JSON.stringify({ crv: 'P-256', kty: 'EC', x, y }))
    .digest('base64url');
  const privateKey = createPrivateKey({
    key: { kty: 'EC', crv: 'P-256', x, y, d: d.toString('base64url') },
    format: 'jwk',
  });
  return { kid, publicJwk: { kid, kty: 'EC', crv: 'P-256', x, y, use: 'sig', alg: 'ES256' }, privateKey };
}

/** The components a UCP webhook's signature covers, in order (signatures.md, REST request signing). */
export const UCP_WEBHOOK_COMPONENTS = [
  '@method',
  '@authority',
  '@path',
  'ucp-agent',
  'webhook-id',
  'webhook-timestamp',
  'content-digest',
  'content-type',
] as const;

/**
 * The headers of a UCP order webhook: `UCP-Agent` (the business profile), `Webhook-Id`, `Webhook-Timestamp`,
 * `Content-Digest` (RFC 9530, SHA-256 of the raw body) and the RFC 9421 `Signature-Input` / `Signature` (ES256, raw
 * r||s) over UCP_WEBHOOK_COMPONENTS.
 */
export function ucpWebhookHeaders(
  key: UcpSigningKey,
  request: {
    url: string;
    body: string;
    webhookId: string;
    profileUrl: string;
    /** When the signature is made (its `created`). */
    createdSeconds: number;
    /** When the event occurred (`Webhook-Timestamp`). */
    occurredSeconds: number;
  },
): Record<string, string> {
  const url = new URL(request.url);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'ucp-agent': serializeDictionary({ profile: request.profileUrl }),
    'webhook-id': request.webhookId,
    'webhook-timestamp': String(request.occurredSeconds),
    'content-digest': serializeDictionary({ 'sha-256': createHash('sha256').update(request.body).digest() }),
  };
  const params = serializeInnerList([
    UCP_WEBHOOK_COMPONENTS.map((name) => [name, new Map()]),
    new Map<string, string | number>([
      ['created', request.createdSeconds],
      ['keyid', key.kid],
    ]),
  ]);
  const base = signatureBase({ method: 'POST', url, headers }, UCP_WEBHOOK_COMPONENTS, params);
  const signature = sign('sha256', Buffer.from(base), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return {
    'Content-Type': headers['content-type']!,
    'UCP-Agent': headers['ucp-agent']!,
    'Webhook-Id': headers['webhook-id']!,
    'Webhook-Timestamp': headers['webhook-timestamp']!,
    'Content-Digest': headers['content-digest']!,
    'Signature-Input': `sig1=${params}`,
    Signature: serializeDictionary({ sig1: signature }),
  };
}

/**
 * RFC 9421's signature base for a request: each covered component's line, then `"@signature-params"`. `headers`
 * are named in lower case. A verifier rebuilds it from what it received (test/support/ucp-signatures.ts).
 */
export function signatureBase(
  request: { method: string; url: URL; headers: Record<string, string | undefined> },
  components: readonly string[],
  params: string,
): string {
  const value = (name: string): string => {
    if (name === '@method') return request.method.toUpperCase();
    if (name === '@authority') return request.url.host.toLowerCase();
    if (name === '@path') return request.url.pathname;
    if (name === '@query') return request.url.search || '?';
    const header = request.headers[name];
    if (header === undefined) throw new Error(`The signature covers ${name}, which the message lacks.`);
    return header.trim();
  };
  return [...components.map((name) => `"${name}": ${value(name)}`), `"@signature-params": ${params}`].join('\n');
}
