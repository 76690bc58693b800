// Order webhooks to agents, pure: each client's signing secret (derived from the service's key, never stored), the
// signature header, the retry schedule and which URLs may receive events.
import { createHmac } from 'node:crypto';

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

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why `raw` cannot receive webhooks, or undefined when it can: https, or http to this machine (development). */
export function webhookUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'webhook_url must be an absolute URL.';
  }
  if (url.username || url.password) return 'webhook_url must not carry credentials.';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname)) return undefined;
  return 'webhook_url must be an https URL (plain http is accepted only for localhost).';
}
