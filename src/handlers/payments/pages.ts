// The HTML a buyer sees: the pay page behind checkout_url (the cart as quoted, and the test processor's button) and
// the receipt of an order. Plain, self-contained pages under a strict Content-Security-Policy; every value escaped.
import type { CheckoutSession, PaidSession } from '../../domain/checkout-session.js';
import { toMajorUnits } from '../../domain/money.js';
import type { OrderStatus } from '../../domain/orders.js';
import type { OrderProgress } from '../../services/orders.js';
import type { RefundNotice, Unpayable } from '../../services/payments/index.js';

/** Inline styles only; forms may post back to this origin only. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222}table{width:100%;border-collapse:collapse}' +
  'td,th{padding:.35rem 0;text-align:left}td:last-child{text-align:right}.total{font-weight:700;border-top:1px solid #ccc}' +
  '.notice{background:#f4f6f8;padding:.75rem;border-radius:.4rem}.warn{background:#fff4e5}.paid{background:#e8f5e9}' +
  'button{font:inherit;font-weight:700;width:100%;padding:.8rem;margin:1rem 0;border:0;border-radius:.4rem;background:#1a56db;color:#fff;cursor:pointer}';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function money(amount: number, currency: string): string {
  return escapeHtml(
    new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(amount),
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head><body>
<h1>${escapeHtml(title)}</h1>
${body}
</body></html>`;
}

function cartTables(session: CheckoutSession): string {
  const { currency } = session;
  const rows = session.line_items
    .map(
      (line) =>
        `<tr><td>${escapeHtml(line.item.title)} × ${line.item.quantity}</td><td>${money(line.base_amount, currency)}</td></tr>`,
    )
    .join('');
  const totals = (['subtotal', 'discount', 'shipping', 'tax', 'total'] as const)
    .map(
      (name) =>
        `<tr class="${name}"><th>${name[0]!.toUpperCase()}${name.slice(1)}</th><td>${name === 'discount' ? '−' : ''}${money(session.totals[name].amount, currency)}</td></tr>`,
    )
    .join('');
  return `<table>${rows}</table>
<table>${totals}</table>
${destinationSection(session)}
<p>Promo codes applied: ${session.promo_codes.length ? escapeHtml(session.promo_codes.join(', ')) : 'none'}.</p>`;
}

/** Where the order goes, how it ships and the tax by jurisdiction; or that the totals are an estimate. */
function destinationSection(session: CheckoutSession): string {
  const address = session.shipping_address;
  if (!address) return '';
  const { currency } = session;
  const lines = [
    address.recipient_name,
    address.line1,
    address.line2,
    [address.postal_code, address.city].filter(Boolean).join(' '),
    [address.region, address.country].filter(Boolean).join(', '),
  ].filter((line): line is string => Boolean(line));
  const option = session.shipping_options?.find((offered) => offered.id === session.shipping_option);
  const shipping = option
    ? `${escapeHtml(option.title)}: ${option.estimated_delivery.min_business_days}–${option.estimated_delivery.max_business_days} business days`
    : escapeHtml(session.shipping_option ?? 'standard');
  const taxes = (session.tax_lines ?? [])
    .map(
      (tax) =>
        `<tr class="tax-line"><td>${escapeHtml(tax.name)} ${tax.rate} %</td><td>${money(tax.amount.amount, currency)}</td></tr>`,
    )
    .join('');
  return `<p class="ship-to">Ships to: ${lines.map(escapeHtml).join(', ')}</p>
<p class="shipping-option">Shipping: ${shipping}</p>
<table>${taxes}</table>
${session.tax_included ? '<p><small>Prices include tax.</small></p>' : ''}`;
}

export interface TestPaymentForm {
  action: string;
  csrfToken: string;
  quoteHash: string;
}

const UNPAYABLE: Record<Unpayable, string> = {
  sold_out:
    'Sorry: part of this order is sold out (or held for another buyer who is paying now). Nothing was charged; ask your assistant to start a new checkout, or try again later.',
  promotion_used_up:
    'Sorry: a promo code of this order has reached its usage limit (or its last uses are held for buyers who are paying now). Nothing was charged; ask your assistant to start a new checkout without it, or try again later.',
  too_many_changes:
    'This checkout changed too many times to be paid here. Nothing was charged; ask your assistant to start a new checkout.',
};

export function unpayableNotice(why: Unpayable): string {
  return UNPAYABLE[why];
}

const REFUSED_BECAUSE: Record<RefundNotice['reasons'][number], string> = {
  session_canceled: 'the checkout had been cancelled',
  insufficient_stock: 'part of the order had sold out meanwhile',
  promotion_exhausted: 'a promo code had reached its usage limit meanwhile',
};

/** Tells the buyer that their payment was refused, why, and that it is refunded in full. */
export function refundNotice(refunded: RefundNotice): string {
  const amount = new Intl.NumberFormat('en', { style: 'currency', currency: refunded.currency.toUpperCase() }).format(
    toMajorUnits(refunded.amount, refunded.currency),
  );
  const why = refunded.reasons.map((reason) => REFUSED_BECAUSE[reason]).join(', and ');
  return `Your payment of ${amount} could not be accepted because ${why}. It is refunded to you in full, automatically.`;
}

/** The pay page of a session not yet paid: the cart, and the test processor's button when test payments are on. */
export function payPage(
  session: CheckoutSession,
  options: { form?: TestPaymentForm; notices?: Array<string | undefined> },
): string {
  const status =
    session.status === 'canceled'
      ? '<p class="notice">This checkout was cancelled. Nothing was charged; ask your assistant to start a new one.</p>'
      : '<p class="notice">Payment is taken by our external payment processor; this store never sees your card details. Nothing has been charged yet.</p>';
  const notice = (options.notices ?? [])
    .filter((text) => text)
    .map((text) => `<p class="notice warn">${escapeHtml(text!)}</p>`)
    .join('\n');
  const form = options.form
    ? `<form method="post" action="${escapeHtml(options.form.action)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(options.form.csrfToken)}">
<input type="hidden" name="quote" value="${escapeHtml(options.form.quoteHash)}">
<button type="submit">Pay ${money(session.totals.total.amount, session.currency)} (test mode, no money moves)</button>
</form>
<p><small>This store runs with its built-in test processor: the button records a payment without charging anything.</small></p>`
    : '';
  return page(
    'Complete your order',
    `${notice}${status}
${cartTables(session)}
${form}
<p><small>Checkout ${escapeHtml(session.id)}</small></p>`,
  );
}

const STATUS_NOTICE: Record<OrderStatus, string> = {
  paid: '<p class="notice paid">Thank you: your payment was received and your order is confirmed.</p>',
  needs_review:
    '<p class="notice warn">Your payment was received. Something about this order needs a person to check it (the amount paid, or stock); the store will contact you. Nothing is lost.</p>',
  partially_refunded: '<p class="notice">Part of your payment was refunded.</p>',
  refunded: '<p class="notice">Your payment was refunded in full.</p>',
  canceled: '<p class="notice">The store cancelled this order and refunded your payment.</p>',
};

const FULFILMENT_NOTICE: Record<OrderProgress['fulfilment_status'], string> = {
  unfulfilled: 'Not shipped yet.',
  partially_shipped: 'Part of your order has shipped.',
  shipped: 'Your order has shipped.',
  delivered: 'Your order was delivered.',
};

function dateOf(iso: string): string {
  return escapeHtml(iso.slice(0, 10));
}

/** Shipping (with each parcel's tracking) and the refunds made, as the store recorded them. */
function progressSection(progress: OrderProgress): string {
  const shipments = progress.shipments.map((shipment) => {
    const number = escapeHtml(shipment.tracking_number);
    const tracking = shipment.tracking_url
      ? `<a href="${escapeHtml(shipment.tracking_url)}" rel="noopener noreferrer">${number}</a>`
      : number;
    const delivered = shipment.delivered_at ? `, delivered ${dateOf(shipment.delivered_at)}` : '';
    return `<tr><td>${escapeHtml(shipment.carrier)} ${tracking}</td><td>shipped ${dateOf(shipment.shipped_at)}${delivered}</td></tr>`;
  });
  const refunds = progress.refunds.map(
    (refund) =>
      `<tr><td>Refund ${dateOf(refund.created_at)}${refund.reason ? `: ${escapeHtml(refund.reason)}` : ''}</td><td>${money(refund.amount.amount, refund.amount.currency)}</td></tr>`,
  );
  return `<h2>Shipping</h2>
<p class="fulfilment">${FULFILMENT_NOTICE[progress.fulfilment_status]}</p>
${shipments.length ? `<table class="shipments">${shipments.join('')}</table>` : ''}
${refunds.length ? `<h2>Refunds</h2><table class="refunds">${refunds.join('')}</table>` : ''}`;
}

/**
 * The receipt: the order as charged (`session` is the paid session, its `order` present), and, on the receipt's own
 * address, the store's progress on it: fulfilment, shipments with tracking, refunds (the pay page's receipt, shown as
 * the payment lands, has none yet).
 */
export function receiptPage(session: PaidSession, progress?: OrderProgress): string {
  const { order } = session;
  return page(
    `Order ${order.order_number}`,
    `${STATUS_NOTICE[order.status]}
${cartTables(session)}
${progress ? progressSection(progress) : ''}
<p>Order <strong>${escapeHtml(order.order_number)}</strong>, checkout ${escapeHtml(session.id)}. Your receipt stays at <a href="${escapeHtml(order.permalink_url)}">this address</a>; keep it.</p>`,
  );
}
