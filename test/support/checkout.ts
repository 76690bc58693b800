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

/** A created session: POST /checkout_sessions must answer 201 (a failed create fails the test, naming the answer). */
export async function createdSession(api: TestService, body: unknown, headers: Record<string, string> = {}) {
  const response = await api.http('/checkout_sessions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`Expected 201 creating a session, got ${response.status}: ${text}`);
  return JSON.parse(text) as any;
}
