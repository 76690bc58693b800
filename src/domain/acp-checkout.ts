// A session rendered as an ACP 2026-04-17 CheckoutSession (the JSON Schema bundle's `CheckoutSession`, or
// `CheckoutSessionWithOrder` once paid), with the discount extension always on. Pure. Field by field as in B.5–B.7 of
// the design: integer minor units, the discount positive, `subtotal` after the discount.
import { discountTitle, HANDOFF_CONTENT, type ProtocolSession } from './protocol-session.js';

export const ACP_VERSION = '2026-04-17';

export interface AcpMessage {
  type: 'info' | 'warning' | 'error';
  code?: string;
  severity?: 'info' | 'low' | 'medium' | 'high' | 'critical';
  resolution?: 'recoverable' | 'requires_buyer_input' | 'requires_buyer_review';
  param?: string;
  content_type: 'plain';
  content: string;
}

export interface AcpRendering {
  namespace: string;
  baseUrl: string;
  psp: string;
  links: Array<{ type: string; url: string; title: string }>;
  /** Messages of this request (update problems), after the session's own. */
  extraMessages?: AcpMessage[];
}

export function acpMessage(fields: Omit<AcpMessage, 'content_type'>): AcpMessage {
  return { ...fields, content_type: 'plain' };
}

const total = (type: string, display_text: string, amount: number) => ({ type, display_text, amount });

function lineTotals(line: ProtocolSession['lines'][number]) {
  return [
    total('items_base_amount', 'Items', line.baseAmount),
    ...(line.discount > 0 ? [total('items_discount', 'Discount', line.discount)] : []),
    total('subtotal', 'Subtotal', line.subtotal),
    total('tax', 'Tax', line.tax),
    total('total', 'Total', line.total),
  ];
}

function sessionTotals(session: ProtocolSession) {
  const { totals, applied } = session;
  return [
    total('items_base_amount', 'Items', totals.subtotal),
    ...(totals.discount > 0
      ? [total('items_discount', applied ? `Discount (${applied.code})` : 'Discount', totals.discount)]
      : []),
    total('subtotal', 'Subtotal', totals.subtotal - totals.discount),
    total('fulfillment', 'Shipping', totals.shipping),
    total('tax', 'Tax', totals.tax),
    total('total', 'Total', totals.total),
  ];
}

function discounts(session: ProtocolSession) {
  const { applied, currency } = session;
  const coupon = applied && {
    id: applied.code,
    name: discountTitle(applied, currency),
    ...(applied.kind === 'percentage' ? { percent_off: applied.value / 100 } : { amount_off: applied.value, currency }),
  };
  return {
    codes: session.codes,
    applied: applied
      ? [
          {
            id: `disc_${applied.code}`,
            code: applied.code,
            coupon,
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
    rejected: session.rejections.map((rejection) => ({
      code: rejection.code,
      reason: rejection.reason,
      message: rejection.content,
    })),
  };
}

function messages(session: ProtocolSession, rendering: AcpRendering): AcpMessage[] {
  return [
    ...(session.state === 'requires_escalation'
      ? [
          acpMessage({
            type: 'info',
            severity: 'info',
            resolution: 'requires_buyer_input',
            param: '$.continue_url',
            content: HANDOFF_CONTENT,
          }),
        ]
      : []),
    ...(session.unavailableLines
      ? [
          acpMessage({
            type: 'error',
            code: 'region_restricted',
            severity: 'high',
            resolution: 'recoverable',
            param: '$.line_items',
            content: `${session.unavailableLines} item(s) are no longer sold in this market and were left out.`,
          }),
        ]
      : []),
    ...(rendering.extraMessages ?? []).filter((message) => message.type === 'error'),
    ...session.rejections.map((rejection) =>
      acpMessage({
        type: 'warning',
        code: rejection.reason,
        resolution: 'recoverable',
        param: `$.discounts.codes[${rejection.index}]`,
        content: rejection.content,
      }),
    ),
  ];
}

/** ACP's states for the store's (D3): an open session the agent cannot pay is `requires_escalation`; no lines, `not_ready_for_payment`. */
const ACP_STATUS = {
  requires_escalation: 'requires_escalation',
  incomplete: 'not_ready_for_payment',
  canceled: 'canceled',
  completed: 'completed',
} as const;

export function toAcpCheckoutSession(session: ProtocolSession, rendering: AcpRendering) {
  const lineIds = session.lines.map((line) => line.id);
  const open = session.state === 'requires_escalation' || session.state === 'incomplete';
  const { buyer, order } = session;
  return {
    id: session.id,
    protocol: { version: ACP_VERSION },
    capabilities: {
      payment: {
        handlers: [
          {
            id: 'human_handoff',
            name: `${rendering.namespace}.human_handoff`,
            display_name: "Pay on the store's page",
            version: ACP_VERSION,
            spec: `${rendering.baseUrl}/docs/payment-handlers/human-handoff`,
            requires_delegate_payment: false,
            requires_pci_compliance: false,
            psp: rendering.psp,
            config_schema: `${rendering.baseUrl}/schemas/payment-handlers/human-handoff.json`,
            instrument_schemas: [],
            config: { instruments_accepted: false, handoff: 'continue_url' },
          },
        ],
      },
      extensions: [
        {
          name: 'discount',
          extends: [
            '$.CheckoutSessionCreateRequest.discounts',
            '$.CheckoutSessionUpdateRequest.discounts',
            '$.CheckoutSession.discounts',
          ],
        },
      ],
    },
    ...(buyer?.email ? { buyer: { ...buyer, email: buyer.email } } : {}),
    status: ACP_STATUS[session.state],
    currency: session.currency,
    line_items: session.lines.map((line) => ({
      id: line.id,
      item: { id: line.variantId, name: line.title, unit_amount: line.unitAmount },
      quantity: line.quantity,
      name: line.title,
      unit_amount: line.unitAmount,
      product_id: line.productId,
      ...(line.sku ? { sku: line.sku } : {}),
      variant_id: line.variantId,
      ...(line.imageUrl ? { images: [line.imageUrl] } : {}),
      totals: lineTotals(line),
    })),
    ...(session.fulfillmentDetails ? { fulfillment_details: session.fulfillmentDetails } : {}),
    fulfillment_options: [
      {
        type: 'shipping',
        id: 'standard',
        title: 'Standard shipping',
        totals: [total('fulfillment', 'Shipping', session.totals.shipping)],
      },
    ],
    selected_fulfillment_options: [{ type: 'shipping', option_id: 'standard', item_ids: lineIds }],
    totals: sessionTotals(session),
    discounts: discounts(session),
    messages: messages(session, rendering),
    links: rendering.links,
    created_at: session.createdAt.toISOString(),
    updated_at: session.updatedAt.toISOString(),
    ...(open ? { continue_url: session.continueUrl } : {}),
    ...(order
      ? {
          order: {
            id: order.id,
            checkout_session_id: session.id,
            permalink_url: order.permalinkUrl,
            ...(order.orderNumber ? { order_number: order.orderNumber } : {}),
            ...(order.status ? { status: order.status } : {}),
            totals: sessionTotals(session),
          },
        }
      : {}),
  };
}
