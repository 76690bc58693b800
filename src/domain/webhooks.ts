// Order webhooks to agents, pure: each client's signing secret (derived from the service's key, never stored), the
// signature header, the retry schedule and which URLs may receive events.
import { createHmac } from 'node:crypto';
import { isRefusedHost, type AllowedHosts } from './egress.js';

export const WEBHOOK_SECRET_PREFIX = 'sfwh_';
/** Attempts before a delivery is given up (about 17 hours of retries with the schedule below). */
export const MAX_ATTEMPTS = 12;

/** The client's secret: HMAC of its id under the service key. Only whoever holds the key can compute it. */
export function webhookSecret(key: string, clientId: string): string {
  return `${WEBHOOK_SECRET_PREFIX}${createHmac('sha256', key).update(`order-webhooks:${clientId}`).digest('base64url')}`;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, the form ACP and Stripe use. */
export function signatureHeader(secret: string, timestampSeconds: number, body: string): string {
  return `t=${timestampSeconds},v1=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** Seconds to wait after the `attempts`-th failed attempt: 1, 2, 4, … capped at an hour. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(2 ** Math.max(attempts - 1, 0), 3600);
}

/**
 * Why `raw` cannot receive webhooks, or undefined when it can: https to a host that is not a private address or a
 * loopback name; a host the operator allows (EGRESS_ALLOWED_HOSTS: tests, local runs) over http too. A name that
 * resolves to a private address is refused when a delivery is sent (src/services/egress.ts).
 */
export function webhookUrlProblem(raw: string, allowed: AllowedHosts): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'webhook_url must be an absolute URL.';
  }
  if (url.username || url.password) return 'webhook_url must not carry credentials.';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed.has(url.hostname)))
    return 'webhook_url must be an https URL.';
  if (isRefusedHost(url, allowed))
    return 'webhook_url must name a public host: loopback, private and link-local addresses are refused.';
  return undefined;
}
