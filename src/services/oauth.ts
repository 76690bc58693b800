// The OAuth 2.0 authorization server for agents: metadata (RFC 8414, RFC 9728), open dynamic registration (RFC 7591),
// the client_credentials grant (RFC 6749 section 4.4), revocation (RFC 7009), and the token check behind every /agent
// request. Secrets and tokens are never logged and only their hashes are stored.
import type { components } from '../../codegen/types.js';
import type { Config } from '../config.js';
import * as repo from '../db/repositories/oauth.js';
import type { Deps } from '../deps.js';
import {
  ACCESS_TOKEN_PREFIX,
  CLIENT_SECRET_PREFIX,
  SCOPES,
  TOKEN_LIFETIME_SECONDS,
  clientCredentials,
  formatScope,
  grantableScopes,
  hashSecret,
  invalidClient,
  newSecret,
  operatorScopes,
  parseScope,
  registrableScopes,
  secretMatches,
  tokenState,
  type FormCredentials,
} from '../domain/auth.js';
import { webhookSecret, webhookUrlProblem } from '../domain/webhooks.js';
import { BadRequest } from '../domain/errors.js';
import { capLiveTokens } from './retention.js';

type Schemas = components['schemas'];

const CLIENT_AUTH_METHODS: Schemas['ClientRegistration']['token_endpoint_auth_method'][] = [
  'client_secret_basic',
  'client_secret_post',
];

/** Where each part of the agent surface is advertised, all under AGENT_BASE_URL (the issuer). */
export function agentUrls(config: Config) {
  const base = config.agentBaseUrl;
  return {
    issuer: base,
    token: `${base}/oauth/token`,
    registration: `${base}/oauth/register`,
    revocation: `${base}/oauth/revoke`,
    skill: `${base}/oauth/skill.md`,
    resourceMetadata: `${base}/.well-known/oauth-protected-resource`,
  };
}

export function authorizationServerMetadata(config: Config): Schemas['AuthorizationServerMetadata'] {
  const urls = agentUrls(config);
  return {
    issuer: urls.issuer,
    token_endpoint: urls.token,
    registration_endpoint: urls.registration,
    revocation_endpoint: urls.revocation,
    grant_types_supported: ['client_credentials'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    scopes_supported: [...SCOPES],
    // client_credentials needs no authorization endpoint, so no response_type applies.
    response_types_supported: [],
    service_documentation: `${config.baseUrl}/docs`,
    agent_auth: {
      skill: urls.skill,
      register_uri: urls.registration,
      revocation_uri: urls.revocation,
      identity_types_supported: ['anonymous'],
      anonymous: { credential_types_supported: ['client_credentials'] },
    },
  };
}

export function protectedResourceMetadata(config: Config): Schemas['ProtectedResourceMetadata'] {
  const urls = agentUrls(config);
  return {
    // Served at /.well-known/oauth-protected-resource with no suffix, so the resource is the base URL itself (RFC 9728 section 3.3).
    resource: urls.issuer,
    resource_name: 'Storefront agent API',
    authorization_servers: [urls.issuer],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_documentation: urls.skill,
  };
}

function invalidClientMetadata(message: string): BadRequest {
  return new BadRequest('invalid_client_metadata', message);
}

function registrationAuthMethod(
  requested: string | undefined,
): Schemas['ClientRegistration']['token_endpoint_auth_method'] {
  if (requested === undefined) return 'client_secret_basic';
  const method = CLIENT_AUTH_METHODS.find((supported) => supported === requested);
  if (!method)
    throw invalidClientMetadata(
      `token_endpoint_auth_method must be ${CLIENT_AUTH_METHODS.join(' or ')}, not "${requested}".`,
    );
  return method;
}

/** The order-events URL asked for, checked, with the key its secret is derived from. */
function registrationWebhook(deps: Deps, url: string | undefined): { url: string; key: string } | undefined {
  if (url === undefined) return undefined;
  const key = deps.config.agentWebhookKey;
  if (!key)
    throw invalidClientMetadata(
      'Order webhooks are not enabled on this store (AGENT_WEBHOOK_KEY is not set); register without webhook_url and poll instead.',
    );
  const problem = webhookUrlProblem(url, new Set(deps.config.egressAllowedHosts));
  if (problem) throw new BadRequest('invalid_client_metadata', problem, { param: 'webhook_url' });
  return { url, key };
}

export async function registerClient(
  deps: Deps,
  metadata: Schemas['ClientRegistrationRequest'],
): Promise<Schemas['ClientRegistration']> {
  const unsupported = (metadata.grant_types ?? []).filter((grant) => grant !== 'client_credentials');
  if (unsupported.length || metadata.grant_types?.length === 0) {
    throw invalidClientMetadata(
      `Only the client_credentials grant can be registered${unsupported.length ? `, not "${unsupported.join('", "')}"` : ''}.`,
    );
  }
  const authMethod = registrationAuthMethod(metadata.token_endpoint_auth_method);
  const webhook = registrationWebhook(deps, metadata.webhook_url);
  const scope = formatScope(registrableScopes(parseScope(metadata.scope)));
  const clientSecret = newSecret(CLIENT_SECRET_PREFIX);
  const createdAt = new Date(deps.now());
  const client: repo.ClientRow = {
    id: deps.ids.next('client'),
    secret_hash: hashSecret(clientSecret),
    name: metadata.client_name ?? null,
    scope,
    webhook_url: webhook?.url ?? null,
    created_at: createdAt,
  };
  await repo.insertClient(deps.db, client);
  deps.log.info({ clientId: client.id, scope }, 'OAuth client registered');
  return {
    client_id: client.id,
    client_secret: clientSecret,
    client_id_issued_at: Math.floor(createdAt.getTime() / 1000),
    client_secret_expires_at: 0,
    ...(metadata.client_name === undefined ? {} : { client_name: metadata.client_name }),
    scope,
    grant_types: ['client_credentials'],
    token_endpoint_auth_method: authMethod,
    token_endpoint: agentUrls(deps.config).token,
    ...(webhook ? { webhook_url: webhook.url, webhook_secret: webhookSecret(webhook.key, client.id) } : {}),
  };
}

/** A client made by the store's operator (`npm run admin -- clients create`): the secret is returned once. */
export interface OperatorClient {
  client_id: string;
  client_secret: string;
  scope: string;
}

/**
 * Creates a client with any known scope, admin scopes included: the operator's command only, talking to the database
 * directly (open registration, registerClient, never grants an admin scope).
 */
export async function createOperatorClient(
  deps: Pick<Deps, 'db' | 'now' | 'log' | 'ids'>,
  request: { name: string; scope: string },
): Promise<OperatorClient> {
  const name = request.name.trim();
  if (!name || name.length > 200)
    throw new BadRequest('invalid_client_metadata', 'The name must be 1 to 200 characters.', { param: 'name' });
  const scope = formatScope(operatorScopes(parseScope(request.scope)));
  const clientSecret = newSecret(CLIENT_SECRET_PREFIX);
  const client: repo.ClientRow = {
    id: deps.ids.next('client'),
    secret_hash: hashSecret(clientSecret),
    name,
    scope,
    webhook_url: null,
    created_at: new Date(deps.now()),
  };
  await repo.insertClient(deps.db, client);
  deps.log.info({ clientId: client.id, scope }, 'OAuth client created by the operator');
  return { client_id: client.id, client_secret: clientSecret, scope };
}

/** The client behind the credentials of a token or revocation request; anything else is `invalid_client`. */
async function authenticateClient(deps: Deps, authorization: string, form: FormCredentials): Promise<repo.ClientRow> {
  const credentials = clientCredentials(authorization, form);
  const client = await repo.findClient(deps.db, credentials.clientId);
  if (!client || !secretMatches(credentials.clientSecret, client.secret_hash)) {
    throw invalidClient(
      'Unknown client or wrong client secret. Recheck the credentials from registration, or register again.',
    );
  }
  return client;
}

export async function issueToken(
  deps: Deps,
  authorization: string,
  request: Schemas['TokenRequest'],
): Promise<Schemas['TokenResponse']> {
  // Checked before the client: an unsupported grant (identity assertions, token exchange) is refused whoever asks.
  if (request.grant_type !== 'client_credentials') {
    throw new BadRequest(
      'unsupported_grant_type',
      `Only grant_type=client_credentials is supported, not "${request.grant_type}"; identity assertions and token exchange are not.`,
    );
  }
  const client = await authenticateClient(deps, authorization, request);
  const scope = formatScope(grantableScopes(parseScope(request.scope), parseScope(client.scope) ?? []));
  const accessToken = newSecret(ACCESS_TOKEN_PREFIX);
  const now = new Date(deps.now());
  await repo.deleteSpentTokens(deps.db, client.id, now);
  await repo.insertToken(deps.db, {
    token_hash: hashSecret(accessToken),
    client_id: client.id,
    scope,
    issued_at: now,
    expires_at: new Date(now.getTime() + TOKEN_LIFETIME_SECONDS * 1000),
  });
  await capLiveTokens(deps, client.id, now);
  deps.log.info({ clientId: client.id, scope }, 'access token issued');
  return { access_token: accessToken, token_type: 'Bearer', expires_in: TOKEN_LIFETIME_SECONDS, scope };
}

/** Revokes the token if the authenticated client was issued it; says nothing either way (RFC 7009 section 2.2). */
export async function revokeToken(
  deps: Deps,
  authorization: string,
  request: Schemas['RevocationRequest'],
): Promise<void> {
  const client = await authenticateClient(deps, authorization, request);
  await repo.revokeToken(deps.db, hashSecret(request.token), client.id, new Date(deps.now()));
}

/** What a valid bearer token grants. */
export interface Grant {
  clientId: string;
  scopes: string[];
}

/**
 * The grant of an access token that is known, unexpired and unrevoked at `deps.now()`; read afresh on every request
 * (never taken from an earlier read, so a revocation is refused by the very next request), in a statement shared with
 * the lookups of concurrent requests (repo.findToken).
 */
export async function findActiveGrant(deps: Deps, accessToken: string): Promise<Grant | undefined> {
  const tokenHash = hashSecret(accessToken);
  const token = await repo.findToken(deps.db, tokenHash);
  if (!token) return undefined;
  const state = tokenState(token, deps.now());
  if (state !== 'active') {
    deps.log.debug({ clientId: token.client_id, state }, 'bearer token rejected');
    return undefined;
  }
  const grant = { clientId: token.client_id, scopes: parseScope(token.scope) ?? [] };
  deps.earlierReads.grants.set(tokenHash, { grant, tokenHash, expiresAt: token.expires_at.getTime() });
  return grant;
}

/**
 * The grant an earlier read found for this token, if it has not expired since, with the token's hash: only for a
 * request whose one write confirms the token is still active in the same statement (repo.stillActiveToken), and
 * whose every other answer waits for findActiveGrant.
 */
export function earlierGrant(deps: Deps, accessToken: string): (Grant & { tokenHash: string }) | undefined {
  const read = deps.earlierReads.grants.get(hashSecret(accessToken));
  return read && deps.now() < read.expiresAt ? { ...read.grant, tokenHash: read.tokenHash } : undefined;
}
