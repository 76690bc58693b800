// The buyer's pages: the pay page behind checkout_url, the test processor's button, and the order receipt.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Deps } from '../../deps.js';
import type { AppContext } from '../../http/context.js';
import { Forbidden, NotFound } from '../../domain/errors.js';
import type { OperationHandlers, OperationInput } from '../../http/openapi.js';
import { presentPaidSession } from '../../services/checkout.js';
import { findOrderByToken, orderProgress } from '../../services/orders.js';
import { openPayPage, payInTestMode, type PayPage } from '../../services/payments/index.js';
import { handleStripeWebhook } from '../../services/payments/stripe.js';
import { PAGE_CSP, payPage, receiptPage, refundNotice, unpayableNotice } from './pages.js';

const CSRF_COOKIE = 'pay_csrf';
const CSRF_TOKEN = /^[A-Za-z0-9_-]{32}$/;

function html(ctx: AppContext, status: number, body: string): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  // Under the service-wide no-referrer, browsers send `Origin: null` with the page's own form post, which the
  // cross-site check must refuse; same-origin keeps the real Origin and still tells other sites nothing.
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/**
 * Cross-site posts are refused twice over: the form must echo the token of a SameSite=Strict cookie (which a
 * cross-site post does not carry), and a browser's Origin / Sec-Fetch-Site must name this site. The token is kept
 * while the cookie lives, so several tabs of one buyer all work.
 */
function csrfToken(ctx: AppContext, id: string): string {
  const existing = ctx.cookies.get(CSRF_COOKIE);
  const token = existing && CSRF_TOKEN.test(existing) ? existing : randomBytes(24).toString('base64url');
  ctx.cookies.set(CSRF_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    path: `/pay/${encodeURIComponent(id)}`,
    secure: ctx.protocol === 'https',
    overwrite: true,
  });
  return token;
}

function sameText(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function refuseCrossSite(ctx: AppContext, deps: Deps, form: OperationInput<'payTestMode'>['body']): void {
  const cookie = ctx.cookies.get(CSRF_COOKIE) ?? '';
  const origin = ctx.get('Origin');
  const site = ctx.get('Sec-Fetch-Site');
  // The public origin, and the one this request was addressed to (an instance reached directly).
  const ownOrigins = [new URL(deps.config.baseUrl).origin, `${ctx.protocol}://${ctx.host}`];
  const crossSite = (origin !== '' && !ownOrigins.includes(origin)) || (site !== '' && site !== 'same-origin');
  if (crossSite || !CSRF_TOKEN.test(cookie) || !sameText(cookie, form.csrf_token)) {
    throw new Forbidden(
      'cross_site_request',
      'This payment form can only be sent from its own page; open the pay page again and use its button.',
      {
        resolution: 'Reload the pay page in your browser and press the button there.',
      },
    );
  }
}

function redirectTo(ctx: AppContext, url: string, text: string): void {
  ctx.status = 303;
  ctx.redirect(url);
  html(ctx, 303, `<a href="${url.replaceAll('"', '%22')}">${text}</a>`);
}

function renderPayPage(ctx: AppContext, deps: Deps, id: string, page: PayPage, status = 200, notice?: string): void {
  if (page.kind === 'redirect') return redirectTo(ctx, page.url, 'Continue to payment.');
  if (page.kind === 'receipt') return html(ctx, status, receiptPage(page.session));
  const notices = [notice, page.refunded && refundNotice(page.refunded)];
  if (page.kind === 'closed') return html(ctx, status, payPage(page.session, { notices }));
  // Nothing the store could honour: no way to pay is offered.
  if (page.kind === 'unpayable')
    return html(ctx, 409, payPage(page.session, { notices: [...notices, unpayableNotice(page.why)] }));
  const form = { action: `/pay/${encodeURIComponent(id)}`, csrfToken: csrfToken(ctx, id), quoteHash: page.quoteHash };
  html(ctx, status, payPage(page.session, { form, notices }));
}

/** Stripe retries what is not acknowledged: a session or payment not found is answered 404, so it is retried, never lost. */
function webhookNotFound(error: unknown): never {
  if (error instanceof NotFound) {
    throw new NotFound(error.message, {
      resolution:
        'The event names a checkout session or payment this store does not know; check the webhook endpoint points at the right store.',
    });
  }
  throw error;
}

export function paymentHandlers(
  deps: Deps,
): Pick<OperationHandlers, 'getPaymentPage' | 'payTestMode' | 'getOrderReceipt' | 'receiveStripeWebhook'> {
  return {
    async getPaymentPage({ path: { id } }, ctx) {
      renderPayPage(ctx, deps, id, await openPayPage(deps, id));
    },
    async payTestMode({ path: { id }, body }, ctx) {
      refuseCrossSite(ctx, deps, body);
      const result = await payInTestMode(deps, id, body.quote);
      if (result.kind === 'quote_changed') {
        return renderPayPage(
          ctx,
          deps,
          id,
          result.page,
          409,
          'The price changed since this page was shown (a price or promotion was updated). Nothing was charged: check the new total and pay again.',
        );
      }
      if (result.kind === 'refused' || (result.kind === 'unchanged' && result.page.kind === 'closed'))
        return renderPayPage(ctx, deps, id, result.page, 409);
      // Paid now, or already (a second press): the pay page shows the receipt (POST/redirect/GET).
      redirectTo(ctx, `/pay/${encodeURIComponent(id)}`, 'Paid: see your receipt.');
    },
    async getOrderReceipt({ path: { token } }, ctx) {
      const paid = await findOrderByToken(deps, token);
      if (!paid)
        throw new NotFound('No order has this receipt address.', {
          resolution: 'Use the permalink_url of the order exactly as given.',
        });
      html(ctx, 200, receiptPage(presentPaidSession(deps, paid), await orderProgress(deps.db, paid.order)));
    },
    async receiveStripeWebhook(_input, ctx) {
      const { payments } = deps.config;
      if (payments.mode !== 'stripe')
        throw new NotFound('Stripe is not the payment processor of this store.', {
          resolution: 'Configure STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET.',
        });
      // The signature covers the bytes Stripe sent: verified on the raw body, never on re-serialised JSON.
      // (Unset when the body was not parsed, e.g. sent as another media type: the signature check then fails.)
      const rawBody = ctx.request.rawBody ?? '';
      const outcome = await handleStripeWebhook(deps, payments, rawBody, ctx.get('Stripe-Signature')).catch(
        webhookNotFound,
      );
      return { status: 200, body: { received: true, ...outcome } };
    },
  };
}
