// Paying as a buyer would: open the pay page, then press the test processor's button (cookie, token and all).
import { expect } from 'vitest';
import { protocolFetch, ucpHeaders } from './protocols.js';
import type { TestService } from './service.js';

export interface PayForm {
  /** The `pay_csrf` cookie the page set, as a Cookie header value. */
  cookie: string;
  csrfToken: string;
  quote: string;
  html: string;
}

/** Opens `/pay/{id}` and reads the test-mode form off it. */
export async function openPayForm(api: TestService, sessionId: string): Promise<PayForm> {
  const page = await api.http(`/pay/${sessionId}`);
  expect(page.status).toBe(200);
  const html = await page.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  expect(cookie).toMatch(/^pay_csrf=/);
  // Browsers send `Origin: null` with a form post from a no-referrer page, which the cross-site check refuses.
  expect(page.headers.get('referrer-policy')).toBe('same-origin');
  return { cookie, csrfToken: field('csrf_token')!, quote: field('quote')!, html };
}

/** Posts the form as the page's own button does; `override` changes what is sent (to test the refusals). */
export async function submitPayForm(
  api: TestService,
  sessionId: string,
  form: PayForm,
  override: { cookie?: string; headers?: Record<string, string>; fields?: Record<string, string> } = {},
): Promise<Response> {
  const body = new URLSearchParams({ csrf_token: form.csrfToken, quote: form.quote, ...override.fields });
  return api.http(`/pay/${sessionId}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Cookie: override.cookie ?? form.cookie,
      Origin: api.url,
      'Sec-Fetch-Site': 'same-origin',
      ...override.headers,
    },
    body: body.toString(),
  });
}

/** Pays a session with the test processor, as a buyer pressing the button would. */
export async function payWithTestProcessor(api: TestService, sessionId: string): Promise<void> {
  const response = await submitPayForm(api, sessionId, await openPayForm(api, sessionId));
  expect(response.status).toBe(303);
}

/**
 * A UCP checkout of `lines` created by the platform whose profile is at `profile`, paid with the test processor as a
 * buyer would: its id and the order it became.
 */
export async function payUcpCheckout(
  api: TestService,
  profile: string,
  lines: Array<{ item: { id: string }; quantity: number }>,
): Promise<{ checkoutId: string; orderId: string }> {
  const created = await protocolFetch(api, '/ucp/checkout-sessions', {
    method: 'POST',
    headers: ucpHeaders(profile),
    body: JSON.stringify({ line_items: lines }),
  });
  expect(created.response.status).toBe(201);
  await payWithTestProcessor(api, created.body.id);
  const paid = await protocolFetch(api, `/ucp/checkout-sessions/${created.body.id}`, {
    headers: ucpHeaders(profile, { 'Idempotency-Key': '' }),
  });
  expect(paid.body.status).toBe('completed');
  return { checkoutId: created.body.id as string, orderId: paid.body.order.id as string };
}
