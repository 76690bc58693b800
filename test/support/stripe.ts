// A local fake of the slice of Stripe's HTTP API the adapter calls (Checkout Sessions: create, expire; refunds), and signed
// webhook deliveries made with the Stripe library's own test-header helper. Nothing leaves the machine.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { expect } from 'vitest';
import { startTestService, type TestService } from './service.js';

export const STRIPE_WEBHOOK_SECRET = 'whsec_test_local_fake_secret';

export interface CreatedCheckout {
  id: string;
  params: URLSearchParams;
  idempotencyKey: string | undefined;
  /** What Stripe would charge: Σ unit_amount × quantity + the fixed shipping amount. */
  amountTotal: number;
  currency: string;
  expired: boolean;
  body: Record<string, unknown>;
}

export interface FakeStripe {
  url: string;
  env: Record<string, string>;
  /** Every Checkout Session created, in order (idempotent repeats are not new ones). */
  created: CreatedCheckout[];
  /** Calls received, including idempotent repeats, with the W3C traceparent they carried (when the service traces). */
  calls: Array<{ method: string; path: string; traceparent?: string }>;
  /** Every refund made, in order (idempotent repeats are not new ones). */
  refunds: Array<{ id: string; paymentIntent: string; idempotencyKey: string | undefined }>;
  /** While set, every API call answers this status. */
  failWith: number | undefined;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function amountOf(params: URLSearchParams): number {
  let total = 0;
  for (let index = 0; params.has(`line_items[${index}][quantity]`); index += 1) {
    total +=
      Number(params.get(`line_items[${index}][price_data][unit_amount]`)) *
      Number(params.get(`line_items[${index}][quantity]`));
  }
  return total + Number(params.get('shipping_options[0][shipping_rate_data][fixed_amount][amount]') ?? 0);
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const byKey = new Map<string, CreatedCheckout>();
  const fake: FakeStripe = {
    url: '',
    env: {},
    created: [],
    calls: [],
    refunds: [],
    failWith: undefined,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (request, response) => {
    const path = new URL(request.url!, 'http://fake').pathname;
    const traceparent = request.headers.traceparent as string | undefined;
    fake.calls.push({ method: request.method!, path, ...(traceparent ? { traceparent } : {}) });
    const params = new URLSearchParams(await readBody(request));
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (fake.failWith) return send(fake.failWith, { error: { type: 'api_error', message: 'Fake outage' } });
    if (request.method === 'POST' && path === '/v1/checkout/sessions') {
      const key = request.headers['idempotency-key'] as string | undefined;
      const repeat = key ? byKey.get(key) : undefined;
      if (repeat) return send(200, repeat.body);
      const id = `cs_test_${fake.created.length + 1}_${Math.random().toString(36).slice(2, 10)}`;
      const checkout: CreatedCheckout = {
        id,
        params,
        idempotencyKey: key,
        amountTotal: amountOf(params),
        currency: params.get('line_items[0][price_data][currency]') ?? '',
        expired: false,
        body: {},
      };
      checkout.body = {
        id,
        object: 'checkout.session',
        url: `https://checkout.stripe.test/c/pay/${id}`,
        amount_total: checkout.amountTotal,
        currency: checkout.currency,
        client_reference_id: params.get('client_reference_id'),
        expires_at: Number(params.get('expires_at')),
        payment_status: 'unpaid',
        status: 'open',
      };
      fake.created.push(checkout);
      if (key) byKey.set(key, checkout);
      return send(200, checkout.body);
    }
    if (request.method === 'POST' && path === '/v1/refunds') {
      const key = request.headers['idempotency-key'] as string | undefined;
      const paymentIntent = params.get('payment_intent') ?? '';
      const refund = fake.refunds.find((entry) => key && entry.idempotencyKey === key) ?? {
        id: `re_test_${fake.refunds.length + 1}`,
        paymentIntent,
        idempotencyKey: key,
      };
      if (!fake.refunds.includes(refund)) fake.refunds.push(refund);
      return send(200, { id: refund.id, object: 'refund', payment_intent: paymentIntent, status: 'succeeded' });
    }
    const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(path);
    if (request.method === 'POST' && expire) {
      const checkout = fake.created.find((entry) => entry.id === expire[1]);
      if (!checkout)
        return send(404, { error: { type: 'invalid_request_error', message: 'No such checkout.session' } });
      checkout.expired = true;
      return send(200, { ...checkout.body, status: 'expired' });
    }
    send(404, {
      error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${path})` },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.env = { STRIPE_SECRET_KEY: 'sk_test_local_fake', STRIPE_WEBHOOK_SECRET, STRIPE_API_URL: fake.url };
  return fake;
}

let eventCounter = 0;

/** A Stripe event envelope around `object`. */
export function stripeEvent(
  type: string,
  object: Record<string, unknown>,
  id = `evt_test_${++eventCounter}_${Date.now()}`,
): Record<string, unknown> {
  return {
    id,
    object: 'event',
    api_version: '2025-01-01',
    created: Math.floor(Date.now() / 1000),
    type,
    livemode: false,
    data: { object },
  };
}

/** The `checkout.session.completed` Stripe sends once `checkout` is paid (amount and currency overridable). */
export function paidCheckout(
  checkout: CreatedCheckout,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ...checkout.body,
    status: 'complete',
    payment_status: 'paid',
    payment_intent: `pi_${checkout.id}`,
    customer_details: { email: 'buyer@example.com' },
    metadata: { checkout_session_id: checkout.params.get('client_reference_id') },
    ...overrides,
  };
}

/** Headers and body of a webhook delivery, signed as Stripe signs them (or with another secret or timestamp). */
export function signedDelivery(event: unknown, options: { secret?: string; timestamp?: number } = {}): RequestInit {
  const payload = JSON.stringify(event);
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret: options.secret ?? STRIPE_WEBHOOK_SECRET,
    ...(options.timestamp ? { timestamp: options.timestamp } : {}),
  });
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': signature },
    body: payload,
  };
}

/** A service that takes payment through a fake Stripe, and the fake; `close` stops both. */
export async function startStripeService(): Promise<{ api: TestService; stripe: FakeStripe; close(): Promise<void> }> {
  const stripe = await startFakeStripe();
  const api = await startTestService({ env: { BASE_URL: 'https://store.example', ...stripe.env } }).catch(
    async (error: unknown) => {
      await stripe.close();
      throw error;
    },
  );
  return {
    api,
    stripe,
    async close() {
      await api.close();
      await stripe.close();
    },
  };
}

/** Opens the session's pay page and returns the Stripe Checkout it redirected to. */
export async function stripeCheckoutFor(
  api: TestService,
  stripe: FakeStripe,
  sessionId: string,
): Promise<CreatedCheckout> {
  const page = await api.http(`/pay/${sessionId}`, { redirect: 'manual' });
  expect(page.status).toBe(303);
  const location = page.headers.get('location')!;
  const checkout = stripe.created.find((entry) => location.endsWith(entry.id));
  expect(checkout, location).toBeDefined();
  return checkout!;
}
