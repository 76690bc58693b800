// A session rendered as a UCP checkout (shopping/checkout.json, with discount.json when negotiated) of the version the
// request negotiated (2026-08-25 or 2026-04-08: the same shape for what this store fills), and UCP's error_response. Pure. Field by field as in A.5–A.7 of the design; amounts are integer minor units, discounts
// negative, a zero discount omitted (the schema's exclusiveMaximum: 0).
import type { Destination } from './destination.js';
import { RATE_SCALE, type ShippingOption } from './fulfilment.js';
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
export const UCP_FULFILLMENT = 'dev.ucp.shopping.fulfillment';

/**
 * The fulfillment extension's ids of this store: one shipping method for every line, its one destination (the
 * session's address) and its one group, whose options are the region's shipping options by code.
 */
export const UCP_SHIPPING_METHOD_ID = 'shipping';
export const UCP_DESTINATION_ID = 'shipping_address';
export const UCP_GROUP_ID = 'package';

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
  /** The entry itemized (tax by jurisdiction; a tax-inclusive total's net and tax): the lines add up to it. */
  lines?: UcpTotalLine[];
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
  fulfillmentNegotiated: boolean;
  /**
   * This request's own problem leaves the checkout not ready for payment (an address the store does not ship to): the
   * status is `incomplete` whatever the stored session's.
   */
  notReady?: boolean;
  /** Messages of this request (update problems, negotiation notes), placed by kind among the session's own. */
  extraMessages?: UcpMessage[];
}

export type UcpCheckout = Record<string, unknown> & { id: string; status: string };

export function ucpEnvelope(
  status: 'success' | 'error',
  rendering: Pick<UcpRendering, 'version' | 'namespace' | 'discountNegotiated' | 'fulfillmentNegotiated'>,
) {
  const { version } = rendering;
  return {
    version,
    status,
    capabilities: {
      [UCP_CHECKOUT]: [{ version }],
      ...(rendering.discountNegotiated ? { [UCP_DISCOUNT]: [{ version }] } : {}),
      ...(rendering.fulfillmentNegotiated ? { [UCP_FULFILLMENT]: [{ version }] } : {}),
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

/** Each code the promotions refused (checkout and cart alike): a warning at its index in `discounts.codes`. */
export function ucpDiscountWarnings(session: ProtocolSession): UcpMessage[] {
  return session.rejections.map((rejection) =>
    ucpMessage({
      type: 'warning',
      code: rejection.reason,
      path: `$.discounts.codes[${rejection.index}]`,
      content: rejection.content,
    }),
  );
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
  const discountWarnings = rendering.discountNegotiated ? ucpDiscountWarnings(session) : [];
  const open = session.state === 'requires_escalation' || session.state === 'incomplete';
  const estimate =
    rendering.fulfillmentNegotiated && open && session.lines.length > 0 && !session.shipping.fulfilment
      ? [
          ucpMessage({
            type: 'info',
            code: 'totals_estimated',
            path: '$.totals',
            content:
              'Shipping and tax are estimates until fulfillment names a shipping destination (methods[0].destinations).',
          }),
        ]
      : [];
  return [
    ...handoff,
    ...unavailable,
    ...extra.filter((m) => m.type === 'error'),
    ...discountWarnings,
    ...extra.filter((m) => m.type === 'warning'),
    ...extra.filter((m) => m.type === 'info'),
    ...estimate,
  ];
}

/** A sub-line of a total entry (UCP 2026-08-25 totals.json `lines`; extra metadata, `type`, allowed). */
export interface UcpTotalLine {
  type: 'net' | 'tax';
  display_text: string;
  amount: number;
}

/** A rate in thousandths of a percent as a buyer reads it: 19 000 → "19 %", 9 975 → "9.975 %". */
function percent(rate: number): string {
  return `${rate / (RATE_SCALE / 100)} %`;
}

/**
 * The tax entries of a line or the cart. Where tax is added (US, Canada) a `tax` entry, itemized by jurisdiction when
 * the destination is known; where prices include it (EU, UK, Japan) no `tax` entry (the entries before the total add up
 * to it without one), but the total itemized: what it is without tax, and each jurisdiction's tax inside it.
 */
function taxEntries(
  session: ProtocolSession,
  tax: number,
  total: number,
  byJurisdiction: Array<{ name: string; rate: number; amount: number }> | undefined,
): UcpTotal[] {
  const fulfilment = session.shipping.fulfilment;
  const itemized = (included: boolean) =>
    (byJurisdiction ?? []).map((entry): UcpTotalLine => ({
      type: 'tax',
      display_text: `${entry.name} ${percent(entry.rate)}${included ? ' (included)' : ''}`,
      amount: entry.amount,
    }));
  if (fulfilment?.taxIncluded)
    return [
      {
        type: 'total',
        display_text: 'Total',
        amount: total,
        lines: [{ type: 'net', display_text: 'Excluding tax', amount: total - tax }, ...itemized(true)],
      },
    ];
  const lines = byJurisdiction && byJurisdiction.length ? { lines: itemized(false) } : {};
  return [
    { type: 'tax', display_text: 'Tax', amount: tax, ...lines },
    { type: 'total', display_text: 'Total', amount: total },
  ];
}

function lineTotalsOf(session: ProtocolSession, line: ProtocolSession['lines'][number]): UcpTotal[] {
  return [
    { type: 'subtotal', display_text: 'Subtotal', amount: line.baseAmount },
    ...(line.discount > 0 ? [{ type: 'items_discount', display_text: 'Discount', amount: -line.discount }] : []),
    ...taxEntries(session, line.tax, line.total, undefined),
  ];
}

/** The session's lines as UCP line items (a checkout's and a cart's alike), each with its totals. */
export function ucpLineItems(session: ProtocolSession) {
  return session.lines.map((line) => ({
    id: line.id,
    item: {
      id: line.variantId,
      title: line.title,
      price: line.unitAmount,
      ...(line.imageUrl ? { image_url: line.imageUrl } : {}),
    },
    quantity: line.quantity,
    totals: lineTotalsOf(session, line),
  }));
}

export function sessionTotalsOf(session: ProtocolSession): UcpTotal[] {
  const { totals, applied } = session;
  const taxes = session.shipping.fulfilment?.taxes.map(({ name, rate, amount }) => ({ name, rate, amount }));
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
    ...taxEntries(session, totals.tax, totals.total, taxes),
  ];
}

/** A checked address as UCP's shipping destination (postal_address.json with its id; 2026-08-25 also its type). */
function shippingDestination(address: Destination, version: UcpVersion) {
  // The recipient's name is kept whole; UCP splits it: the last word is the last name.
  const name = address.recipientName.trim();
  const cut = name.lastIndexOf(' ');
  return {
    id: UCP_DESTINATION_ID,
    ...(version === '2026-08-25' ? { type: 'shipping_address' } : {}),
    ...(cut > 0 ? { first_name: name.slice(0, cut), last_name: name.slice(cut + 1) } : { first_name: name }),
    street_address: address.line1,
    ...(address.line2 ? { extended_address: address.line2 } : {}),
    address_locality: address.city,
    // The subdivision's code within its country (US-CA → CA), beside the country.
    ...(address.region ? { address_region: address.region.slice(address.country.length + 1) } : {}),
    ...(address.postalCode ? { postal_code: address.postalCode } : {}),
    address_country: address.country,
  };
}

function fulfillmentOption(
  option: Pick<ShippingOption, 'code' | 'title' | 'description'>,
  amount: number,
  version: UcpVersion,
) {
  return {
    id: option.code,
    title: option.title,
    // 2026-08-25 describes in formats (common/types/description.json); 2026-04-08 in plain text.
    description: version === '2026-08-25' ? { plain: option.description } : option.description,
    totals: [{ type: 'fulfillment', display_text: option.title, amount }],
  };
}

/**
 * The fulfillment extension's view of the session: one shipping method for every line; with an address, its one
 * destination (selected) and one group offering each option at what it costs these goods, the priced one selected.
 */
function fulfillment(session: ProtocolSession, version: UcpVersion) {
  const { fulfilment, offered } = session.shipping;
  const lineIds = session.lines.map((line) => line.id);
  const options = offered.length
    ? offered
    : fulfilment
      ? [{ option: fulfilment.shippingOption, amount: session.totals.shipping }]
      : [];
  return {
    methods: [
      {
        id: UCP_SHIPPING_METHOD_ID,
        type: 'shipping',
        line_item_ids: lineIds,
        destinations: fulfilment ? [shippingDestination(fulfilment.shippingAddress, version)] : [],
        selected_destination_id: fulfilment ? UCP_DESTINATION_ID : null,
        ...(fulfilment
          ? {
              groups: [
                {
                  id: UCP_GROUP_ID,
                  line_item_ids: lineIds,
                  options: options.map(({ option, amount }) => fulfillmentOption(option, amount, version)),
                  selected_option_id: fulfilment.shippingOption.code,
                },
              ],
            }
          : {}),
      },
    ],
  };
}

/** discount.json's `discounts` of a checkout or a cart: the codes as stored, the promotion they applied. */
export function ucpDiscounts(session: ProtocolSession) {
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
    status: rendering.notReady && open ? 'incomplete' : session.state,
    currency: session.currency.toUpperCase(),
    line_items: ucpLineItems(session),
    ...buyerOf(session),
    totals: sessionTotalsOf(session),
    ...(rendering.discountNegotiated ? { discounts: ucpDiscounts(session) } : {}),
    ...(rendering.fulfillmentNegotiated ? { fulfillment: fulfillment(session, rendering.version) } : {}),
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
