// Helpers for tests of the merchant's side (issue #35): an admin client made by the operator's command, and one admin
// or agent request with its parsed answer (every answer validated against the contract by api.http).
import { expect } from 'vitest';
import { runAdminCommand } from '../../src/admin/commands.js';
import { createLogger } from '../../src/log.js';
import { bearer, requestToken, type RegisteredClient } from './agent.js';
import type { TestService } from './service.js';

/** A client the operator created with `scope` (`npm run admin -- clients create … --json` on the service's database). */
export async function adminClient(api: TestService, scope: string): Promise<RegisteredClient> {
  let out = '';
  const code = await runAdminCommand(
    { db: api.service.deps.db, now: Date.now, log: createLogger('silent') },
    ['clients', 'create', '--name', 'Back office', '--scope', scope, '--json'],
    { out: (text) => (out += text), err: () => {} },
  );
  expect(code).toBe(0);
  return JSON.parse(out) as RegisteredClient;
}

/** A token of a new admin client with `scope`. */
export async function adminToken(api: TestService, scope: string): Promise<string> {
  return requestToken(api, await adminClient(api, scope));
}

let keyCounter = 0;
export const newKey = () => `key-${Date.now()}-${++keyCounter}`;

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/**
 * One request: a bearer `token`, a JSON `body` (a string is sent as is), and on POST and PUT an Idempotency-Key (`key`,
 * a new one unless given; null for none).
 */
export async function adminCall(
  api: TestService,
  method: string,
  path: string,
  init: { token?: string; body?: unknown; key?: string | null } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.token) Object.assign(headers, bearer(init.token));
  if (init.body !== undefined) headers['Content-Type'] = 'application/json';
  if ((method === 'POST' || method === 'PUT') && init.key !== null) headers['Idempotency-Key'] = init.key ?? newKey();
  const response = await api.http(path, {
    method,
    headers,
    body: init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** How many admin changes are recorded. */
export async function auditCount(api: TestService): Promise<number> {
  return Number((await api.service.deps.db('audit_events').count({ n: '*' }))[0]!.n);
}
