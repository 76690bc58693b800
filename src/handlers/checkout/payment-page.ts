// The human hand-off page behind payment_provider.checkout_url: the cart exactly as the API prices it, and where
// payment happens. Plain, self-contained HTML under a strict Content-Security-Policy.
import type { Deps } from '../../deps.js';
import type { CheckoutSession } from '../../domain/checkout-session.js';
import type { AppContext } from '../../http/context.js';
import { getCheckoutSession } from '../../services/checkout.js';

const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function money(amount: number, currency: string): string {
  return escapeHtml(new Intl.NumberFormat('en', { style: 'currency', currency: currency.toUpperCase() }).format(amount));
}

function pageFor(session: CheckoutSession): string {
  const { currency } = session;
  const rows = session.line_items
    .map((line) => `<tr><td>${escapeHtml(line.item.title)} × ${line.item.quantity}</td><td>${money(line.base_amount, currency)}</td></tr>`)
    .join('');
  const totals = (['subtotal', 'discount', 'shipping', 'tax', 'total'] as const)
    .map((name) => `<tr class="${name}"><th>${name[0]!.toUpperCase()}${name.slice(1)}</th><td>${name === 'discount' ? '−' : ''}${money(session.totals[name].amount, currency)}</td></tr>`)
    .join('');
  const status =
    session.status === 'canceled'
      ? '<p class="notice">This checkout was cancelled. Nothing was charged; ask your assistant to start a new one.</p>'
      : '<p class="notice">Payment is taken by our external payment processor; this store never sees your card details. Nothing has been charged yet.</p>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Complete your order</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222}table{width:100%;border-collapse:collapse}td,th{padding:.35rem 0;text-align:left}td:last-child{text-align:right}.total{font-weight:700;border-top:1px solid #ccc}.notice{background:#f4f6f8;padding:.75rem;border-radius:.4rem}</style>
</head><body>
<h1>Complete your order</h1>
${status}
<table>${rows}</table>
<table>${totals}</table>
<p>Promo codes applied: ${session.promo_codes.length ? escapeHtml(session.promo_codes.join(', ')) : 'none'}.</p>
<p><small>Checkout ${escapeHtml(session.id)}</small></p>
</body></html>`;
}

export async function renderPaymentPage(deps: Deps, ctx: AppContext, id: string): Promise<void> {
  const session = await getCheckoutSession(deps, id);
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = pageFor(session);
}
