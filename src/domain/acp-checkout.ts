// A session rendered as an ACP 2026-04-17 CheckoutSession (the JSON Schema bundle's `CheckoutSession`, or
// `CheckoutSessionWithOrder` once paid), with the discount extension always on. Pure. Field by field as in B.5–B.7 of
// the design: integer minor units, the discount positive, `subtotal` after the discount.
import type { DestinationField, DestinationInput, DestinationProblem } from './destination.js';
import { deliveryWindow, RATE_SCALE } from './fulfilment.js';
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
  /** When the session is shown: the shipping options' delivery windows count from its day (default: updated_at). */
  now?: Date;
}

/** Each field of the destination as ACP's Address names it. */
const ACP_ADDRESS_FIELDS: Record<DestinationField, string> = {
  recipientName: 'name',
  line1: 'line_one',
  line2: 'line_two',
  city: 'city',
  region: 'state',
  postalCode: 'postal_code',
  country: 'country',
};

/** Where a destination field is in an ACP request: `$.fulfillment_details.address.country`. */
export function acpAddressParam(field: DestinationField): string {
  return `$.fulfillment_details.address.${ACP_ADDRESS_FIELDS[field]}`;
}

type Fields = Record<string, unknown>;
const textOf = (value: unknown) => (typeof value === 'string' ? value : null);

/**
 * The address ACP `fulfillment_details` name, as a destination to check (the contact's name stands for a missing
 * recipient); null when they name none.
 */
export function acpDestinationInput(details: unknown): DestinationInput | null {
  if (typeof details !== 'object' || details === null) return null;
  const { address, name } = details as Fields;
  if (typeof address !== 'object' || address === null) return null;
  const fields = address as Fields;
  return {
    recipientName: textOf(fields.name) ?? textOf(name),
    line1: textOf(fields.line_one),
    line2: textOf(fields.line_two),
    city: textOf(fields.city),
    region: textOf(fields.state),
    postalCode: textOf(fields.postal_code),
    country: textOf(fields.country),
  };
}

/** ACP's MessageError code for a problem with the address: missing, a place the store does not ship to, or invalid. */
function addressMessageCode(problem: DestinationProblem): string {
  if (problem.code === 'required') return 'missing';
  if (problem.code === 'not_shipped') return 'region_restricted';
  return 'invalid';
}

/** Each problem of an address an ACP request sent, as a MessageError at its field. */
export function acpAddressMessages(problems: DestinationProblem[]): AcpMessage[] {
  return problems.map((problem) =>
    acpMessage({
      type: 'error',
      code: addressMessageCode(problem),
      severity: 'high',
      resolution: 'requires_buyer_input',
      param: acpAddressParam(problem.field),
      content: `fulfillment_details.address.${problem.message.replace(`${problem.field}:`, `${ACP_ADDRESS_FIELDS[problem.field]}:`)}`,
    }),
  );
}

export function acpMessage(fields: Omit<AcpMessage, 'content_type'>): AcpMessage {
  return { ...fields, content_type: 'plain' };
}

const total = (type: string, display_text: string, amount: number) => ({ type, display_text, amount });

/**
 * Where prices include tax (EU, UK, Japan, with a destination), the tax is the part of the amounts above it that is
 * tax: shown, with this description, and not added to the total (docs/fulfilment-and-tax.md).
 */
export const TAX_INCLUDED_DESCRIPTION = 'Included in the amounts above; not added to the total.';

function taxTotal(session: ProtocolSession, amount: number, breakdown = false) {
  const { fulfilment } = session.shipping;
  if (!fulfilment) return total('tax', 'Tax', amount);
  return {
    ...total('tax', fulfilment.taxIncluded ? 'Tax (included)' : 'Tax', amount),
    ...(fulfilment.taxIncluded ? { description: TAX_INCLUDED_DESCRIPTION } : {}),
    ...(breakdown
      ? {
          breakdown: fulfilment.taxes.map((tax) => ({
            jurisdiction: tax.name,
            rate: tax.rate / RATE_SCALE,
            amount: tax.amount,
          })),
        }
      : {}),
  };
}

function lineTotals(session: ProtocolSession, line: ProtocolSession['lines'][number]) {
  return [
    total('items_base_amount', 'Items', line.baseAmount),
    ...(line.discount > 0 ? [total('items_discount', 'Discount', line.discount)] : []),
    total('subtotal', 'Subtotal', line.subtotal),
    taxTotal(session, line.tax),
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
    taxTotal(session, totals.tax, true),
    total('total', 'Total', totals.total),
  ];
}

/** The shipping options offered: the destination's, each with its window and what it costs; without one, Standard at the estimate. */
function fulfillmentOptions(session: ProtocolSession, rendering: AcpRendering) {
  const { fulfilment, offered } = session.shipping;
  if (!fulfilment)
    return [
      {
        type: 'shipping',
        id: 'standard',
        title: 'Standard shipping',
        totals: [total('fulfillment', 'Shipping', session.totals.shipping)],
      },
    ];
  const from = rendering.now ?? session.updatedAt;
  // A paid session offers the option it was charged, at what it was charged.
  const options = offered.length ? offered : [{ option: fulfilment.shippingOption, amount: session.totals.shipping }];
  return options.map(({ option, amount }) => {
    const { earliest, latest } = deliveryWindow(from, option);
    return {
      type: 'shipping',
      id: option.code,
      title: option.title,
      description: option.description,
      earliest_delivery_time: earliest.toISOString(),
      latest_delivery_time: latest.toISOString(),
      totals: [total('fulfillment', 'Shipping', amount)],
    };
  });
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
    ...acpAddressMessages(session.addressProblems),
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

/**
 * ACP's states for the store's (D3): an open session the agent cannot pay is `requires_escalation`; no lines, or an
 * address the store does not ship to, `not_ready_for_payment`.
 */
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
      totals: lineTotals(session, line),
    })),
    ...(session.fulfillmentDetails ? { fulfillment_details: session.fulfillmentDetails } : {}),
    fulfillment_options: fulfillmentOptions(session, rendering),
    selected_fulfillment_options: [
      {
        type: 'shipping',
        option_id: session.shipping.fulfilment?.shippingOption.code ?? 'standard',
        item_ids: lineIds,
      },
    ],
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
