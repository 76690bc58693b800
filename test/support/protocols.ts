// Helpers for the ACP/UCP binding tests: a platform-profile server (the platform side of UCP negotiation), the
// environment that turns the bindings on over loopback, and a fetch that validates every body against the OpenAPI
// document (contractFetch) and against the protocol's own schemas.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { protocolBodyProblems as bodyProblems } from '../../src/protocols/responses.js';
import { protocolValidators } from '../../src/protocols/schemas.js';
import type { SchemaProblem } from '../../src/protocols/schemas.js';
// The conformance runner's platform profile is the one the tests serve, so the two cannot drift apart.
import { platformProfile, UCP_VERSION } from '../../src/conformance/profile.js';
import type { TestService } from './service.js';

export { platformProfile, UCP_VERSION };

export const PROTOCOL_BASE_URL = 'https://shop.example.com';

/** The tests' validators of protocol bodies (every problem reported), built once per test file. */
export const testValidators = protocolValidators();

/** Every problem of a body against its protocol schemas (src/protocols/responses.ts). */
export function protocolBodyProblems(path: string, status: number, body: unknown): SchemaProblem[] {
  return bodyProblems(testValidators, path, status, body);
}

/** Turns both bindings on with profiles fetched from loopback (UCP_INSECURE_PROFILE_HOSTS is a test allow-list). */
export const PROTOCOL_ENV = { BASE_URL: PROTOCOL_BASE_URL, UCP_INSECURE_PROFILE_HOSTS: '127.0.0.1' };

type Answer = { status: number; body: string; headers?: Record<string, string>; delayMs?: number };

/** Named platform profiles, good and bad, served over http on 127.0.0.1. */
const PROFILES: Record<string, Answer> = {
  '/full.json': { status: 200, body: JSON.stringify(platformProfile()) },
  '/no-discount.json': { status: 200, body: JSON.stringify(platformProfile({ discount: false })) },
  '/no-checkout.json': { status: 200, body: JSON.stringify(platformProfile({ checkout: false, discount: false })) },
  '/old-version.json': { status: 200, body: JSON.stringify(platformProfile({ version: '2026-01-23' })) },
  '/not-json': { status: 200, body: '<html>hello</html>', headers: { 'Content-Type': 'text/html' } },
  '/invalid.json': { status: 200, body: JSON.stringify({ ucp: { version: UCP_VERSION } }) },
  '/not-a-profile.json': { status: 200, body: JSON.stringify({ service: 'inventory', items: [1, 2, 3] }) },
  '/missing.json': { status: 404, body: '{}' },
  '/redirect.json': { status: 302, body: '', headers: { Location: '/full.json' } },
  '/huge.json': { status: 200, body: JSON.stringify({ ...platformProfile(), padding: 'x'.repeat(300 * 1024) }) },
};

export interface ProfileServer {
  /** The URL of a named profile, e.g. `url('/full.json')`. */
  url(path: keyof typeof PROFILES | string): string;
  /** How many times each path was fetched. */
  fetches: Map<string, number>;
  close(): Promise<void>;
}

export async function startProfileServer(): Promise<ProfileServer> {
  const fetches = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0]!;
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const answer = PROFILES[path] ?? { status: 404, body: '{}' };
    response.writeHead(answer.status, { 'Content-Type': 'application/json', ...answer.headers });
    response.end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    fetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The headers of a UCP REST request from the platform whose profile is at `profile`. */
export function ucpHeaders(profile: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'UCP-Agent': `profile="${profile}"`,
    'Request-Id': randomUUID(),
    'Idempotency-Key': randomUUID(),
    'Content-Type': 'application/json',
    ...extra,
  };
}

export interface ProtocolAnswer {
  response: Response;
  text: string;
  body: any;
}

/** api.http (OpenAPI validation) plus the protocol schemas; a body that fails either fails the test. */
export async function protocolFetch(api: TestService, path: string, init?: RequestInit): Promise<ProtocolAnswer> {
  const response = await api.http(path, init);
  const text = await response.text();
  const body = text ? JSON.parse(text) : undefined;
  expect(
    protocolBodyProblems(new URL(path, api.url).pathname, response.status, body),
    `${init?.method ?? 'GET'} ${path} → ${response.status}: ${text.slice(0, 600)}`,
  ).toEqual([]);
  return { response, text, body };
}

/** Number of carts stored (a failed create must store none). */
export async function cartCount(api: TestService): Promise<number> {
  return Number((await api.service.deps.db('carts').count({ n: '*' }))[0]!.n);
}

/**
 * A create's answer without what two identical creates are given differently: their ids (the session's, its lines',
 * the request's, wherever they appear) and times.
 */
export function comparableAnswer({ status, text }: { status: number; text: string }) {
  const body = JSON.parse(text);
  const ids: string[] = [
    body.id,
    body.request_id,
    ...(body.line_items ?? []).map((line: { id?: string }) => line.id),
  ].filter((id): id is string => typeof id === 'string');
  let masked = text;
  ids.forEach((id, index) => (masked = masked.replaceAll(id, `<id ${index}>`)));
  masked = masked.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>');
  return { status, body: JSON.parse(masked) };
}
