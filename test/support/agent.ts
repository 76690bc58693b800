// OAuth helpers for tests of the agent surface: register a client, get a token, build Authorization headers.
import { expect } from 'vitest';
import type { TestService } from './service.js';

export interface RegisteredClient {
  client_id: string;
  client_secret: string;
  scope: string;
}

/** HTTP Basic client authentication, each part form-encoded first (RFC 6749 section 2.3.1). */
export function basicAuth(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;
}

export function bearer(token: string): { Authorization: string } {
  return { Authorization: `Bearer ${token}` };
}

export function form(fields: Record<string, string>): { body: string; headers: Record<string, string> } {
  return {
    body: new URLSearchParams(fields).toString(),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  };
}

export async function registerClient(
  api: TestService,
  metadata: Record<string, unknown> = { scope: 'catalog:read cart:write' },
): Promise<RegisteredClient> {
  const response = await api.http('/oauth/register', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(metadata),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as RegisteredClient;
}

/** A token for the client (its whole registered scope unless `scope` is given). */
export async function requestToken(api: TestService, client: RegisteredClient, scope?: string): Promise<string> {
  const request = form({ grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) });
  const response = await api.http('/oauth/token', {
    method: 'POST',
    body: request.body,
    headers: { ...request.headers, Authorization: basicAuth(client.client_id, client.client_secret) },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** Revokes a token of the client's at POST /oauth/revoke (RFC 7009), on `api` (any instance will refuse it). */
export async function revokeToken(api: TestService, client: RegisteredClient, token: string): Promise<void> {
  const revocation = form({ token });
  const answer = await api.http('/oauth/revoke', {
    method: 'POST',
    body: revocation.body,
    headers: { ...revocation.headers, Authorization: basicAuth(client.client_id, client.client_secret) },
  });
  expect(answer.status).toBe(200);
}

/** A fresh client with the given scope and a token for it. */
export async function agentToken(api: TestService, scope = 'catalog:read'): Promise<string> {
  return requestToken(api, await registerClient(api, { scope }));
}
