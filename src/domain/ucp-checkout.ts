// A session rendered as a UCP checkout (shopping/checkout.json, with discount.json when negotiated) of the version the
// request negotiated (2026-08-25 or 2026-04-08: the same shape for what this store fills), and UCP's error_response. Pure. Field by field as in A.5–A.7 of the design; amounts are integer minor units, discounts
// negative, a zero discount omitted (the schema's exclusiveMaximum: 0).
import { discountTitle, HANDOFF_CONTENT, type ProtocolSession } from './protocol-session.js';

/** The UCP versions served, newest first: the business profile at /.well-known/ucp is the newest's. */
export const UCP_VERSIONS = ['2026-08-25', '2026-04-08'] as const;
export type UcpVersion = (typeof UCP_VERSIONS)[number];
export const UCP_LATEST: UcpVersion = UCP_VERSIONS[0];
/** The older version, still served (its profile named in the newest's `supported_versions`). */
export const UCP_VERSION: UcpVersion = '2026-04-08';

export function isUcpVersion(value: unknown): value is UcpVersion {
  return (UCP_VERSIONS as readonly unknown[]).includes(value);
}

/**
 * The sale basis of every item of this store (UCP 2026-08-25 `item.quantity_unit`): whole items, UN/CEFACT `C62` at
 * scale 0, which a response encodes by leaving `quantity_unit` out.
 */
export const EACH_UNIT = { unit: 'C62', scale: 0 } as const;

/** Whether a requested `quantity_unit` (unit, effective scale; display text and increment ignored) is `each`. */
export function isEachUnit(requested: { unit: string; scale?: number }): boolean {
  return requested.unit === EACH_UNIT.unit && (requested.scale ?? 0) === EACH_UNIT.scale;
}
export const UCP_CHECKOUT = 'dev.ucp.shopping.checkout';
export const UCP_DISCOUNT = 'dev.ucp.shopping.discount';

export interface UcpMessage {
  type: 'error' | 'warning' | 'info';
  code?: string;
  severity?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review' | 'unrecoverable';
  path?: string;
  content: string;
  content_type: 'plain';
}

export interface UcpTotal {
  type: string;
  display_text: string;
  amount: number;
}

export interface UcpLink {
  type: string;
  url: string;
  title: string;
}

/** What the rendering needs from configuration and negotiation. */
export interface UcpRendering {
  /** The negotiated version: the envelope's and every entity's. */
  version: UcpVersion;
  /** The namespace in that version's grammar. */
  namespace: string;
  baseUrl: string;
  links: UcpLink[];
  discountNegotiated: boolean;
  /** Messages of this request (update problems, negotiation notes), placed by kind among the session's own. */
  extraMessages?: UcpMessage[];
}

export type UcpCheckout = Record<string, unknown> & { id: string; status: string };

export function ucpEnvelope(
  status: 'success' | 'error',
  rendering: Pick<UcpRendering, 'version' | 'namespace' | 'discountNegotiated'>,
) {
  const { version } = rendering;
  return {
    version,
    status,
    capabilities: {
      [UCP_CHECKOUT]: [{ version }],
      ...(rendering.discountNegotiated ? { [UCP_DISCOUNT]: [{ version }] } : {}),
    },
    payment_handlers: {
      [`${rendering.namespace}.human_handoff`]: [
        { id: 'human_handoff', version, available_instruments: [{ type: 'hosted_checkout' }] },
      ],
    },
  };
}

/** Every message is plain text. */
export function ucpMessage(fields: Omit<UcpMessage, 'content_type'>): UcpMessage {
  return { ...fields, content_type: 'plain' };
}

/** A.7's order: the handoff error, line errors, discount warnings, other warnings, info. */
function orderedMessages(session: ProtocolSession, rendering: UcpRendering): UcpMessage[] {
  const extra = rendering.extraMessages ?? [];
  const handoff =
    session.state === 'requires_escalation'
      ? [
          ucpMessage({
            type: 'error',
            code: 'payment_handoff_required',
            severity: 'requires_buyer_input',
            path: '$.continue_url',
            content: HANDOFF_CONTENT,
          }),
        ]
      : [];
  const unavailable = session.unavailableLines
    ? [
        ucpMessage({
          type: 'error',
          code: 'item_unavailable',
          severity: 'recoverable',
          path: '$.line_items',
          content: `${session.unavailableLines} item(s) are no longer sold in this market and were left out of the checkout and its totals.`,
        }),
      ]
    : [];
  const discountWarnings = rendering.discountNegotiated
    ? session.rejections.map((rejection) =>
        ucpMessage({
          type: 'warning',
          code: rejection.reason,
          path: `$.discounts.codes[${rejection.index}]`,
          content: rejection.content,
        }),
      )
    : [];
  return [
    ...handoff,
    ...unavailable,
    ...extra.filter((m) => m.type === 'error'),
    ...discountWarnings,
    ...extra.filter((m) => m.type === 'warning'),
    ...extra.filter((m) => m.type === 'info'),
  ];
}

export function lineTotalsOf(line: ProtocolSession['lines'][number]): UcpTotal[] {
  return [
    { type: 'subtotal', display_text: 'Subtotal', amount: line.baseAmount },
    ...(line.discount > 0 ? [{ type: 'items_discount', display_text: 'Discount', amount: -line.discount }] : []),
    { type: 'tax', display_text: 'Tax', amount: line.tax },
    { type: 'total', display_text: 'Total', amount: line.total },
  ];
}

export function sessionTotalsOf(session: ProtocolSession): UcpTotal[] {
  const { totals, applied } = session;
  return [
    { type: 'subtotal', display_text: 'Subtotal', amount: totals.subtotal },
    ...(totals.discount > 0
      ? [
          {
            type: 'items_discount',
            display_text: applied ? `Discount (${applied.code})` : 'Discount',
            amount: -totals.discount,
          },
        ]
      : []),
    {
      type: 'fulfillment',
      display_text: totals.shipping === 0 ? 'Shipping (free)' : 'Shipping',
      amount: totals.shipping,
    },
    { type: 'tax', display_text: 'Tax', amount: totals.tax },
    { type: 'total', display_text: 'Total', amount: totals.total },
  ];
}

function discounts(session: ProtocolSession) {
  const { applied } = session;
  return {
    codes: session.codes,
    applied: applied
      ? [
          {
            code: applied.code,
            title: discountTitle(applied, session.currency),
            amount: applied.amount,
            automatic: false,
            method: 'across',
            priority: 1,
            allocations: session.lines.flatMap((line, index) =>
              line.discount > 0 ? [{ path: `$.line_items[${index}]`, amount: line.discount }] : [],
            ),
          },
        ]
      : [],
  };
}

function buyerOf(session: ProtocolSession) {
  const { buyer } = session;
  if (!buyer) return {};
  return {
    buyer: Object.fromEntries(
      ['email', 'first_name', 'last_name', 'phone_number'].flatMap((key) =>
        buyer[key as keyof typeof buyer] ? [[key, buyer[key as keyof typeof buyer]]] : [],
      ),
    ),
  };
}

export function toUcpCheckout(session: ProtocolSession, rendering: UcpRendering): UcpCheckout {
  const open = session.state === 'requires_escalation' || session.state === 'incomplete';
  return {
    ucp: ucpEnvelope('success', rendering),
    id: session.id,
    status: session.state,
    currency: session.currency.toUpperCase(),
    line_items: session.lines.map((line) => ({
      id: line.id,
      item: {
        id: line.variantId,
        title: line.title,
        price: line.unitAmount,
        ...(line.imageUrl ? { image_url: line.imageUrl } : {}),
      },
      quantity: line.quantity,
      totals: lineTotalsOf(line),
    })),
    ...buyerOf(session),
    totals: sessionTotalsOf(session),
    ...(rendering.discountNegotiated ? { discounts: discounts(session) } : {}),
    messages: orderedMessages(session, rendering),
    links: rendering.links,
    ...(open ? { continue_url: session.continueUrl } : {}),
    ...(session.order
      ? {
          order: {
            id: session.order.id,
            permalink_url: session.order.permalinkUrl,
            ...(session.order.orderNumber ? { label: session.order.orderNumber } : {}),
          },
        }
      : {}),
    payment: { instruments: [] },
  };
}

/** UCP's error_response (no checkout to show): unknown session, items that cannot be bought, incompatible capabilities. */
export function ucpErrorResponse(
  messages: UcpMessage[],
  baseUrl: string,
  version: UcpVersion,
  options: { emptyCapabilities?: boolean } = {},
) {
  return {
    ucp: { version, status: 'error' as const, ...(options.emptyCapabilities ? { capabilities: {} } : {}) },
    messages,
    continue_url: `${baseUrl}/`,
  };
}
