// The checkout surface's create, as tests send it.
import type { TestService } from './service.js';

/** POST /checkout_sessions with `body` (under `key` as Idempotency-Key, if given): its status, parsed body and headers. */
export async function createSession(api: TestService, body: unknown, key?: string) {
  const response = await api.http('/checkout_sessions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key ? { 'Idempotency-Key': key } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
}
