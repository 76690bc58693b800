// The Stripe adapter: a hosted Checkout Session per quote (reused while the quote is unchanged), made only once what
// it may take is held for it, the webhook events that turn a session into an order, and the refunds of payments the
// store refused. Every call has a timeout and an idempotency key.
import type Stripe from 'stripe';
import type { PaymentsConfig } from '../../config.js';
import * as payments from '../../db/repositories/payments.js';
import * as processorCheckouts from '../../db/repositories/processor-checkouts.js';
import { reserveForCheckout, type Reservation } from '../../db/repositories/payment-holds.js';
import type { Deps } from '../../deps.js';
import { quoteHash, type Quote } from '../../domain/orders.js';
import type { Destination } from '../../domain/destination.js';
import { BadRequest, ProcessorUnavailable } from '../../domain/errors.js';
import { recordPayment, recordRefund, type PaymentOutcome, type RefundOutcome } from '../orders.js';
import { expireStripeCheckout } from './expiry.js';
import type { Tracing } from '../../tracing.js';

type StripeConfig = Extract<PaymentsConfig, { mode: 'stripe' }>;

const CALL_TIMEOUT_MS = 10_000;
/**
 * How long a Checkout Session lives (Stripe allows 30 minutes to 24 hours), and with it the hold on what it may take:
 * an hour lets a buyer pay, and lets nobody hold the stock for a day by opening pay pages. One is reused until
 * shortly before it expires.
 */
const CHECKOUT_LIFETIME_S = 3600;
const REUSE_MARGIN_S = 15 * 60;
/** A hold outlives its checkout by this much: a payment made just before the checkout expired may be reported later. */
const HOLD_GRACE_S = 15 * 60;
/**
 * The checkouts one session may have made at Stripe (one per quote it was paid at): what an anonymous visitor
 * changing a session's quote between pay-page visits can make the store spend is bounded by it.
 */
const MAX_CHECKOUTS_PER_SESSION = 10;
/** How old a signed webhook may be (Stripe's own default): older ones are replays. */
const SIGNATURE_TOLERANCE_S = 300;

/**
 * The SDK is loaded when Stripe takes payment, not with this module: it costs the start a few hundred modules' worth
 * of loading and ~15 MB of RSS, which the test and pay-by-link modes (and the embedded default) never use.
 */
async function stripeSdk(): Promise<typeof Stripe> {
  return (await import('stripe')).default;
}

/**
 * The SDK's own Node HTTP client, with the active span's `traceparent` and `tracestate` on every call when tracing is
 * on (so the processor's side, or a stand-in's, can join the trace).
 */
function httpClient(StripeSdk: typeof Stripe, tracing: Tracing | undefined): Stripe.HttpClient | undefined {
  if (!tracing) return undefined;
  const client = StripeSdk.createNodeHttpClient();
  const makeRequest = client.makeRequest.bind(client);
  client.makeRequest = (host, port, path, method, headers, ...rest) => {
    const span = tracing.startSpan(method, {
      kind: 'client',
      attributes: { 'http.request.method': method, 'server.address': host, 'url.path': path.split('?')[0]! },
    });
    if (!span) return makeRequest(host, port, path, method, headers, ...rest);
    return tracing
      .within(span, () => makeRequest(host, port, path, method, { ...headers, ...tracing.outboundHeaders() }, ...rest))
      .then(
        (response) => {
          span.setAttribute('http.response.status_code', response.getStatusCode());
          span.end();
          return response;
        },
        (error: unknown) => {
          span.end(error);
          throw error;
        },
      );
  };
  return client;
}

export async function createStripeClient(config: StripeConfig, tracing?: Tracing): Promise<Stripe> {
  const api = config.apiUrl ? new URL(config.apiUrl) : undefined;
  const StripeSdk = await stripeSdk();
  const traced = httpClient(StripeSdk, tracing);
  return new StripeSdk(config.secretKey, {
    timeout: CALL_TIMEOUT_MS,
    maxNetworkRetries: 1,
    telemetry: false,
    ...(traced ? { httpClient: traced } : {}),
    ...(api
      ? {
          host: api.hostname,
          port: api.port || (api.protocol === 'https:' ? 443 : 80),
          protocol: api.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
  });
}

function processorUnavailable(error: unknown): ProcessorUnavailable {
  return new ProcessorUnavailable(
    `The payment processor could not be reached (${error instanceof Error ? error.message : 'unknown error'}); nothing was charged.`,
  );
}

/**
 * Stripe charges Σ line unit_amount × quantity + shipping. Each session line becomes one Stripe line of quantity 1
 * priced at the line's own total (after its discount share, tax included), so the sum is the quote's total to the
 * minor unit, whatever the rounding of a per-unit price would have been. Shipping is the rest of the total: the
 * option's charge and, where tax is added and the destination taxes shipping, its tax. Stripe computes no tax of its
 * own (no automatic_tax): the amounts are the quote's. A quote for a destination sends its address as the payment's
 * shipping details and names the option.
 */
/** A destination as Stripe's shipping details. */
function stripeShipping(address: Destination): Stripe.Checkout.SessionCreateParams.PaymentIntentData.Shipping {
  return {
    name: address.recipientName,
    address: {
      line1: address.line1,
      ...(address.line2 ? { line2: address.line2 } : {}),
      city: address.city,
      ...(address.region ? { state: address.region.slice(address.country.length + 1) } : {}),
      ...(address.postalCode ? { postal_code: address.postalCode } : {}),
      country: address.country,
    },
  };
}

function checkoutParams(
  deps: Deps,
  sessionId: string,
  quote: Quote,
  buyerEmail: string | null,
  expiresAt: number,
): Stripe.Checkout.SessionCreateParams {
  const pageUrl = `${deps.config.baseUrl}/pay/${encodeURIComponent(sessionId)}`;
  const shippingCharged = quote.totals.total - quote.lines.reduce((sum, line) => sum + line.total, 0);
  return {
    mode: 'payment',
    client_reference_id: sessionId,
    metadata: { checkout_session_id: sessionId },
    payment_intent_data: {
      metadata: { checkout_session_id: sessionId },
      ...(quote.fulfilment ? { shipping: stripeShipping(quote.fulfilment.shippingAddress) } : {}),
    },
    ...(buyerEmail ? { customer_email: buyerEmail } : {}),
    line_items: quote.lines.map((line) => ({
      quantity: 1,
      price_data: {
        currency: quote.currencyCode,
        unit_amount: line.total,
        product_data: {
          name: `${line.title} × ${line.quantity}`,
          description: line.discount ? 'Discount applied; tax included.' : 'Tax included.',
        },
      },
    })),
    ...(shippingCharged > 0
      ? {
          shipping_options: [
            {
              shipping_rate_data: {
                type: 'fixed_amount',
                display_name: quote.fulfilment ? `Shipping: ${quote.fulfilment.shippingOption.title}` : 'Shipping',
                fixed_amount: { amount: shippingCharged, currency: quote.currencyCode },
              },
            },
          ],
        }
      : {}),
    expires_at: expiresAt,
    success_url: pageUrl,
    cancel_url: pageUrl,
  };
}

export type StripeCheckout = { kind: 'redirect'; url: string } | Exclude<Reservation, { kind: 'held' }>;

/**
 * Where the buyer pays this quote: the session's Stripe Checkout, made for this exact quote, reused while it is
 * unchanged and not about to expire. A changed quote gets a new one (the old one is expired, so it cannot be paid).
 * None is made when the store could not honour its payment (stock or promotion uses short, counting what is held for
 * other sessions' checkouts), nor beyond MAX_CHECKOUTS_PER_SESSION.
 */
export async function stripeCheckout(
  deps: Deps,
  stripe: Stripe,
  sessionId: string,
  quote: Quote,
  buyerEmail: string | null,
): Promise<StripeCheckout> {
  const hash = quoteHash(quote);
  const latest = await processorCheckouts.latestProcessorCheckout(deps.db, 'stripe', sessionId);
  if (
    latest &&
    latest.quote_hash === hash &&
    new Date(latest.expires_at).getTime() - deps.now() > REUSE_MARGIN_S * 1000
  )
    return { kind: 'redirect', url: latest.url };
  // The checkouts being made by this instance, by session and quote: concurrent visits wait for one call to Stripe.
  return deps.callsInProgress.share(`stripe-checkout ${sessionId} ${hash}`, () =>
    newCheckout(deps, stripe, sessionId, quote, hash, latest, buyerEmail),
  );
}

async function newCheckout(
  deps: Deps,
  stripe: Stripe,
  sessionId: string,
  quote: Quote,
  hash: string,
  latest: processorCheckouts.ProcessorCheckoutRow | undefined,
  buyerEmail: string | null,
): Promise<StripeCheckout> {
  const now = deps.now();
  const expiresAt = Math.floor(now / 1000) + CHECKOUT_LIFETIME_S;
  const reserved = await reserveForCheckout(deps.db, {
    sessionId,
    quote,
    at: new Date(now),
    holdUntil: new Date((expiresAt + HOLD_GRACE_S) * 1000),
    maxCheckouts: MAX_CHECKOUTS_PER_SESSION,
  });
  if (reserved.kind !== 'held') return reserved;

  let created: Stripe.Checkout.Session;
  try {
    // Concurrent visits on any instance see the same quote and the same checkout to replace, so they ask Stripe with
    // the same key and get one Checkout Session. The replaced checkout is part of the key: Stripe keeps keys 24 h,
    // longer than a checkout lives, and a renewal must not be answered with the expiring one.
    const idempotencyKey = `checkout:${sessionId}:${hash}:${latest?.reference ?? 'first'}`;
    created = await stripe.checkout.sessions.create(checkoutParams(deps, sessionId, quote, buyerEmail, expiresAt), {
      idempotencyKey,
      timeout: CALL_TIMEOUT_MS,
    });
  } catch (error) {
    throw processorUnavailable(error);
  }
  await processorCheckouts.saveProcessorCheckout(deps.db, {
    processor: 'stripe',
    session_id: sessionId,
    quote_hash: hash,
    quote,
    reference: created.id,
    url: created.url!,
    expires_at: new Date(created.expires_at * 1000),
    created_at: new Date(now),
  });
  if (latest && latest.reference !== created.id) await expireStripeCheckout(deps, stripe, latest.reference);
  return { kind: 'redirect', url: created.url! };
}

/**
 * Refunds, in full, a payment the store refused (PAID_ORDERS), once (its idempotency key is the payment's), and
 * records the refund. Nothing to do for a payment refused and refunded before, or never refused.
 */
export async function refundRefusedPayment(deps: Deps, stripe: Stripe, paymentReference: string): Promise<boolean> {
  const refused = await payments.findRefusedPayment(deps.db, 'stripe', paymentReference);
  if (refused?.refund_state !== 'pending') return false;
  if (!paymentReference.startsWith('pi_')) {
    deps.log.error({ payment: paymentReference }, 'a refused Stripe payment names no PaymentIntent: refund it by hand');
    return false;
  }
  let refund: Stripe.Refund;
  try {
    refund = await stripe.refunds.create(
      {
        payment_intent: paymentReference,
        metadata: { checkout_session_id: refused.session_id, refused_because: refused.reasons.join(' ') },
      },
      { idempotencyKey: `refund:${paymentReference}`, timeout: CALL_TIMEOUT_MS },
    );
  } catch (error) {
    // Answered 502: Stripe delivers the event again, and the refund is asked for again.
    throw processorUnavailable(error);
  }
  await payments.markRefunded(deps.db, 'stripe', paymentReference, refund.id, new Date(deps.now()));
  return true;
}

export type WebhookOutcome = {
  event: string;
  result: 'order_created' | 'order_exists' | 'order_updated' | 'payment_refunded' | 'duplicate' | 'ignored';
};

function invalidSignature(message: string): BadRequest {
  return new BadRequest('invalid_signature', `The Stripe-Signature header does not verify: ${message}`, {
    param: 'Stripe-Signature',
    resolution:
      'Send the raw body exactly as Stripe signed it, with the endpoint secret configured as STRIPE_WEBHOOK_SECRET.',
  });
}

function paymentResult(outcome: PaymentOutcome): WebhookOutcome['result'] {
  const results = {
    created: 'order_created',
    existing: 'order_exists',
    duplicate: 'duplicate',
    refused: 'payment_refunded',
  } as const;
  return results[outcome.kind];
}

function refundResult(outcome: RefundOutcome): WebhookOutcome['result'] {
  const results = { updated: 'order_updated', duplicate: 'duplicate', refusal_refunded: 'payment_refunded' } as const;
  return results[outcome.kind];
}

function idOf(value: string | { id: string } | null): string | undefined {
  return typeof value === 'string' ? value : (value?.id ?? undefined);
}

/** Verifies a webhook on its raw body and applies it. Unknown event types are acknowledged and ignored. */
export async function handleStripeWebhook(
  deps: Deps,
  config: StripeConfig,
  rawBody: string,
  signature: string,
): Promise<WebhookOutcome> {
  if (!signature) throw invalidSignature('the header is missing.');
  const { webhooks, errors } = await stripeSdk();
  let event: Stripe.Event;
  try {
    event = webhooks.constructEvent(
      rawBody,
      signature,
      config.webhookSecret,
      SIGNATURE_TOLERANCE_S,
      undefined,
      deps.now(),
    );
  } catch (error) {
    if (error instanceof errors.StripeSignatureVerificationError) throw invalidSignature(error.message);
    throw error;
  }
  const ignored: WebhookOutcome = { event: event.id, result: 'ignored' };
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const checkout = event.data.object;
      // A delayed payment method completes the checkout unpaid; its async_payment_succeeded event makes the order.
      if (checkout.payment_status !== 'paid') return ignored;
      const sessionId = checkout.client_reference_id ?? checkout.metadata?.checkout_session_id;
      if (!sessionId) return ignored; // a checkout made by something else on the same Stripe account
      const paymentReference = idOf(checkout.payment_intent) ?? checkout.id;
      const outcome = await recordPayment(deps, {
        processor: 'stripe',
        eventId: event.id,
        eventType: event.type,
        sessionId,
        paymentReference,
        checkoutReference: checkout.id,
        amountPaid: checkout.amount_total ?? 0,
        currency: checkout.currency ?? '',
        buyerEmail: checkout.customer_details?.email ?? null,
      });
      // Refused now, or before with its refund not yet made (a redelivery after Stripe could not be reached).
      if (outcome.kind === 'refused' || outcome.kind === 'duplicate')
        await refundRefusedPayment(deps, deps.stripe!, paymentReference);
      return { event: event.id, result: paymentResult(outcome) };
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      const paymentReference = idOf(charge.payment_intent);
      if (!paymentReference) return ignored;
      return {
        event: event.id,
        result: refundResult(
          await recordRefund(deps, {
            processor: 'stripe',
            eventId: event.id,
            eventType: event.type,
            paymentReference,
            amountRefunded: charge.amount_refunded,
            refundReference: charge.refunds?.data[0]?.id ?? charge.id,
          }),
        ),
      };
    }
    default:
      return ignored;
  }
}
