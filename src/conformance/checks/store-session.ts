// What this store's own checks (store-ucp.ts, store-acp.ts; run only with --store-specific) share: this store's paths
// (/ucp, /acp), versions and item, its platform profiles, a token from its own OAuth, and a call that validates each
// body against the protocol schema its path calls for.
import { randomUUID } from 'node:crypto';
import type { Answer, HttpClient, Json } from '../client.js';
import { servePlatformProfiles, UCP_VERSION, type ProfileServer } from '../profile.js';
import { knownVersions, type SchemaProblem, type SchemaSets } from '../schemas.js';
import { CheckFailure, type Check } from './check.js';

export const ACP_VERSION = '2026-04-17';
export const TWO_PACK = 'variant_01tongue2pack';
export const SPEC = 'this store\'s binding decisions: README › "ACP and UCP" and the U-/A- checks of the design';

export interface StoreCheck extends Check<StoreSession> {
  protocol: 'ucp' | 'acp';
}

export function title(id: string): string {
  return `this store's exact figures (${id})`;
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailure(`expected this store's answer, got: ${message}`);
}

/** The schemas a body of this store's paths must pass (its UCP protocol errors have a prose-only shape). */
export function bodyProblems(schemaSet: SchemaSets, path: string, status: number, body: unknown): SchemaProblem[] {
  const object = (body ?? {}) as Record<string, any>;
  // A UCP body by the version it says it is in (the store answers each platform in its profile's version).
  const said: unknown = object.ucp?.version;
  const ucp = schemaSet('ucp', typeof said === 'string' && knownVersions('ucp').includes(said) ? said : UCP_VERSION);
  const acp = schemaSet('acp', ACP_VERSION);
  if (path === '/.well-known/ucp') return status === 200 ? ucp.problems('business_profile', body) : [];
  if (path === '/.well-known/acp.json') return acp.problems(status === 200 ? 'DiscoveryResponse' : 'Error', body);
  if (/^\/ucp\/checkout-sessions(\/|$)/.test(path)) {
    if (status !== 200 && status !== 201) return [];
    const has = (capability: string) => object.ucp?.capabilities?.[capability] && object.ucp?.status === 'success';
    return [
      ...ucp.problems('checkout_response', body),
      ...(has('dev.ucp.shopping.discount') ? ucp.problems('checkout_with_discount', body) : []),
      ...(has('dev.ucp.shopping.fulfillment') ? ucp.problems('checkout_with_fulfillment', body) : []),
    ];
  }
  if (/^\/acp(\/|$)/.test(path)) {
    if (status >= 300) return acp.problems('Error', body);
    return acp.problems(object.order ? 'CheckoutSessionWithOrder' : 'CheckoutSession', body);
  }
  return [];
}

/** Registers a client with this store's own OAuth and gets a cart:write token (client_credentials). */
export async function storeAcpToken(client: HttpClient, base: string): Promise<string> {
  const registration = await client.request(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'acp-conformance', grant_types: ['client_credentials'], scope: 'cart:write' }),
  });
  assert(registration.status === 201 || registration.status === 200, `/oauth/register ${registration.status}`);
  const token = await client.request(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: registration.body.client_id,
      client_secret: registration.body.client_secret,
      scope: 'cart:write',
    }).toString(),
  });
  assert(typeof token.body?.access_token === 'string', `/oauth/token ${token.status}`);
  return token.body.access_token;
}

export interface StoreSession {
  base: string;
  lenient: boolean;
  profile: string;
  profileBase?: string;
  /** The run's compiled schemas. */
  schemaSets: SchemaSets;
  onSchemaErrors: (count: number) => void;
  call(path: string, init?: RequestInit): Promise<Answer>;
  ucpCheckouts: Json[];
  acpSessions: Json[];
  ucpHeaders(agent?: string, extra?: Record<string, string>): Record<string, string>;
  ucpCreate(body: unknown, headers?: Record<string, string>): Promise<Answer>;
  lines(quantity?: number): Json;
  totalsOf(totals: Json[]): Json[];
  /** The ACP token, fetched on first use. */
  acpToken(): Promise<string>;
  acpHeaders(extra?: Record<string, string>): Record<string, string>;
  acpCreate(body: unknown, extra?: Record<string, string>): Promise<Answer>;
  BASIC: Json;
  close(): Promise<void>;
}

export async function openStoreSession(options: {
  client: HttpClient;
  base: string;
  lenient: boolean;
  profileUrl?: string;
  schemaSets: SchemaSets;
  onSchemaErrors: (count: number) => void;
}): Promise<StoreSession> {
  const { client, base } = options;
  let server: ProfileServer | undefined;
  let profileBase: string | undefined;
  if (!options.profileUrl) ({ server, base: profileBase } = await servePlatformProfiles());
  const profile = options.profileUrl ?? `${profileBase}/full.json`;
  const ucpCheckouts: Json[] = [];
  const acpSessions: Json[] = [];
  let token: string | undefined;
  const call = async (path: string, init: RequestInit = {}) => {
    const answer = await client.request(`${base}${path}`, init);
    const pathname = new URL(`${base}${path}`).pathname;
    const problems =
      pathname === '/ucp/mcp' ? [] : bodyProblems(options.schemaSets, pathname, answer.status, answer.body);
    if (problems.length) {
      options.onSchemaErrors(problems.length);
      throw new CheckFailure(
        `${init.method ?? 'GET'} ${path} → ${answer.status}: ${problems.length} schema errors, first: ${problems[0]!.path} ${problems[0]!.message}`,
      );
    }
    if (answer.status < 300 && pathname.startsWith('/ucp/checkout-sessions') && answer.body?.ucp?.status === 'success')
      ucpCheckouts.push(answer.body);
    if (answer.status < 300 && pathname.startsWith('/acp/checkout_sessions')) acpSessions.push(answer.body);
    return answer;
  };
  const ucpHeaders = (agent = profile, extra: Record<string, string> = {}): Record<string, string> => ({
    'UCP-Agent': `profile="${agent}"`,
    'Request-Id': randomUUID(),
    'Idempotency-Key': randomUUID(),
    'Content-Type': 'application/json',
    ...extra,
  });
  const acpHeaders = (extra: Record<string, string> = {}) => ({
    Authorization: `Bearer ${token}`,
    'API-Version': ACP_VERSION,
    'Idempotency-Key': randomUUID(),
    'Content-Type': 'application/json',
    ...extra,
  });
  return {
    base,
    lenient: options.lenient,
    profile,
    profileBase,
    schemaSets: options.schemaSets,
    onSchemaErrors: options.onSchemaErrors,
    call,
    ucpCheckouts,
    acpSessions,
    ucpHeaders,
    ucpCreate: (body, headers = ucpHeaders()) =>
      call('/ucp/checkout-sessions', { method: 'POST', headers, body: JSON.stringify(body) }),
    lines: (quantity = 2) => ({ line_items: [{ item: { id: TWO_PACK }, quantity }] }),
    totalsOf: (totals) => totals.map((total: Json) => [total.type, total.amount]),
    async acpToken() {
      token ??= await storeAcpToken(client, base);
      return token;
    },
    acpHeaders,
    acpCreate: (body, extra = {}) =>
      call('/acp/checkout_sessions', { method: 'POST', headers: acpHeaders(extra), body: JSON.stringify(body) }),
    BASIC: { line_items: [{ id: TWO_PACK, quantity: 2 }], currency: 'usd', capabilities: {} },
    close: async () => {
      await server?.close();
    },
  };
}
