// The pure parts of OAuth 2.0 for agents: client credentials (RFC 6749 section 2.3.1), scopes (section 3.3), opaque
// secrets and their hashes, the state of a stored token at an instant, and RFC 6750 bearer challenges.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { BadRequest, InvalidClient } from './errors.js';

export const SCOPES = ['catalog:read', 'cart:write', 'orders:read'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * The merchant's scopes (the `/admin` API): granted only to clients an operator creates (`npm run admin -- clients
 * create`), never through open registration. `admin:orders` reads, ships, delivers, cancels and refunds orders and reads
 * the audit trail; `admin:catalog` changes prices and stock; `admin:promotions` creates, expires and lists promotions.
 */
export const ADMIN_SCOPES = ['admin:orders', 'admin:catalog', 'admin:promotions'] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];

/** Every scope a token can carry: the agents' and the merchant's. */
export const ALL_SCOPES: readonly string[] = [...SCOPES, ...ADMIN_SCOPES];

/** Registration without a `scope` gets the least privilege: reading the catalogue. */
export const DEFAULT_SCOPES: Scope[] = ['catalog:read'];

export const TOKEN_LIFETIME_SECONDS = 3600;

/** Recognisable prefixes, so secret scanners and people can tell a leaked token or client secret at a glance. */
export const ACCESS_TOKEN_PREFIX = 'sfat_';
export const CLIENT_SECRET_PREFIX = 'sfcs_';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** Credentials a token or revocation request may carry in its form body (client_secret_post). */
export interface FormCredentials {
  client_id?: string;
  client_secret?: string;
}

export function invalidClient(message: string): InvalidClient {
  return new InvalidClient(message);
}

function invalidScope(message: string): BadRequest {
  return new BadRequest('invalid_scope', `${message} Use only ${SCOPES.join(', ')}.`);
}

/** application/x-www-form-urlencoded decoding of one value; undefined when the percent-encoding is broken. */
function formDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * `Basic base64(form-encoded id ":" form-encoded secret)` → the credentials. RFC 6749 section 2.3.1 form-encodes both
 * parts before base64, so a `:` or `%` inside an id or secret arrives as `%3A` or `%25`. Undefined when malformed.
 */
export function parseBasicCredentials(header: string): ClientCredentials | undefined {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (!clientId || clientSecret === undefined) return undefined;
  return { clientId, clientSecret };
}

/**
 * The client's credentials, from HTTP Basic (client_secret_basic) or the form body (client_secret_post). A client
 * uses exactly one method per request (RFC 6749 section 2.3); no credentials, or unreadable ones, is `invalid_client`.
 */
export function clientCredentials(authorization: string, form: FormCredentials): ClientCredentials {
  if (authorization) {
    if (form.client_secret !== undefined) {
      throw new BadRequest(
        'invalid_request',
        'Authenticate with one method only: HTTP Basic or client_secret in the body, not both.',
      );
    }
    const credentials = parseBasicCredentials(authorization);
    if (!credentials) throw invalidClient('The Authorization header is not valid HTTP Basic client authentication.');
    if (form.client_id !== undefined && form.client_id !== credentials.clientId) {
      throw new BadRequest(
        'invalid_request',
        'client_id in the body does not match the client authenticated with HTTP Basic.',
      );
    }
    return credentials;
  }
  if (form.client_id && form.client_secret) return { clientId: form.client_id, clientSecret: form.client_secret };
  throw invalidClient(
    'Client authentication is required: HTTP Basic with the client_id and client_secret from registration.',
  );
}

/** The bearer token of an `Authorization: Bearer <token>` header (RFC 6750 section 2.1), or undefined. */
export function parseBearerToken(header: string): string | undefined {
  return /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header)?.[1];
}

/** Space-separated scope tokens, deduplicated; undefined when none are given (RFC 6749 section 3.3). */
export function parseScope(raw: string | undefined): string[] | undefined {
  const scopes = [...new Set((raw ?? '').split(' ').filter(Boolean))];
  return scopes.length ? scopes : undefined;
}

export function formatScope(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** The scopes a client may register: the ones asked for, or the default; any unknown scope is `invalid_scope`. */
export function registrableScopes(requested: string[] | undefined): Scope[] {
  if (!requested) return DEFAULT_SCOPES;
  const unknown = requested.filter((scope) => !(SCOPES as readonly string[]).includes(scope));
  if (unknown.some((scope) => (ADMIN_SCOPES as readonly string[]).includes(scope)))
    throw invalidScope('Admin scopes are never granted by registration; the store operator creates admin clients.');
  if (unknown.length) throw invalidScope(`Unknown scope ${unknown.map((scope) => `"${scope}"`).join(', ')}.`);
  return SCOPES.filter((scope) => requested.includes(scope));
}

/**
 * The scopes an operator may give a client (`npm run admin -- clients create`): any known scope, admin ones included,
 * in the canonical order; none, or an unknown one, is `invalid_scope`.
 */
export function operatorScopes(requested: string[] | undefined): string[] {
  if (!requested) throw new BadRequest('invalid_scope', `Name at least one scope: ${ALL_SCOPES.join(', ')}.`);
  const unknown = requested.filter((scope) => !ALL_SCOPES.includes(scope));
  if (unknown.length)
    throw new BadRequest(
      'invalid_scope',
      `Unknown scope ${unknown.map((scope) => `"${scope}"`).join(', ')}. Use only ${ALL_SCOPES.join(', ')}.`,
    );
  return ALL_SCOPES.filter((scope) => requested.includes(scope));
}

/** The requested scopes, any known one (agent or admin); an unknown one is `invalid_scope`. */
function knownScopes(requested: string[]): string[] {
  const unknown = requested.filter((scope) => !ALL_SCOPES.includes(scope));
  if (unknown.length) throw invalidScope(`Unknown scope ${unknown.map((scope) => `"${scope}"`).join(', ')}.`);
  return ALL_SCOPES.filter((scope) => requested.includes(scope));
}

/**
 * The scopes a token is granted: those requested that the client registered (all registered when none are requested).
 * An unknown scope, or nothing left after the intersection, is `invalid_scope`.
 */
export function grantableScopes(requested: string[] | undefined, registered: readonly string[]): string[] {
  const wanted = requested ? knownScopes(requested) : ALL_SCOPES.filter((scope) => registered.includes(scope));
  const granted = wanted.filter((scope) => registered.includes(scope));
  if (!granted.length) {
    throw invalidScope(
      `This client is registered for "${formatScope(registered)}" and asked for none of it; register again with the scope you need.`,
    );
  }
  return granted;
}

export function hasScopes(granted: readonly string[], required: readonly string[]): boolean {
  return required.every((scope) => granted.includes(scope));
}

/** A high-entropy opaque secret: 32 random bytes, base64url, behind a recognisable prefix. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** SHA-256 is enough for 256-bit random secrets: there is nothing to brute-force, so no slow KDF is needed. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = createHash('sha256').update(secret, 'utf8').digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}

export type TokenState = 'active' | 'expired' | 'revoked';

export function tokenState(token: { expires_at: Date; revoked_at: Date | null }, now: number): TokenState {
  if (token.revoked_at !== null) return 'revoked';
  return now < token.expires_at.getTime() ? 'active' : 'expired';
}

function quoted(value: string): string {
  return `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

/** An RFC 6750 section 3 challenge, e.g. `Bearer error="insufficient_scope", scope="cart:write", resource_metadata="…"`. */
export function bearerChallenge(params: { error?: string; scope?: string; resourceMetadata: string }): string {
  const parts = [
    ...(params.error ? [`error=${quoted(params.error)}`] : []),
    ...(params.scope ? [`scope=${quoted(params.scope)}`] : []),
    `resource_metadata=${quoted(params.resourceMetadata)}`,
  ];
  return `Bearer ${parts.join(', ')}`;
}
