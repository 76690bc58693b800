// The ACP 2026-04-17 REST binding at /acp and its discovery document at /.well-known/acp.json (3.B of the design).
// Checks in order: route, bearer token (this service's OAuth, scope cart:write), API-Version, Idempotency-Key on POST,
// body, then the idempotency claim, after which every answer below 500 is stored under the key (scope: the client).
import type { Deps } from '../deps.js';
import type { WebDeps } from './web-deps.js';
import { ACP_VERSION } from '../domain/acp-checkout.js';
import { isCountryCode } from '../domain/acp-feed.js';
import { bearerChallenge, hasScopes, parseBearerToken } from '../domain/auth.js';
import { createAcpOperations, type AcpCall, type AcpOperation } from '../handlers/acp/checkout.js';
import { createAcpCartOperations, isCartCheckout, type AcpCartOperation } from '../handlers/acp/cart.js';
import { protocolKeys } from '../services/idempotency/index.js';
import { agentUrls, earlierGrant, findActiveGrant } from '../services/oauth.js';
import { supportedCurrencies } from '../services/protocol-sessions.js';
import { readAcpFeed } from '../services/acp-feed.js';
import { mcpCors } from '../mcp/transport.js';
import {
  ACP_MCP_PATH,
  createAcpMcpServer,
  serveAcpMcp,
  type AcpMcpBinding,
  type AcpMcpCall,
} from '../mcp/acp-server.js';
import {
  createUnderGrant,
  jsonResponse,
  ProtocolError,
  runProtocolOperation,
  readJsonBody,
  sendProtocolResponse,
  type ProtocolAnswer,
  type BindingAnswer,
  type ProtocolBinding,
  type ProtocolExchange,
} from './protocol-io.js';
import { ACP_CODES, acpErrorBody, acpFailure, protocolErrorOf, renderAcpError } from './protocol-errors.js';

export const ACP_DISCOVERY_PATH = '/.well-known/acp.json';
const DISCOVERY_CACHE_CONTROL = 'public, max-age=3600';
export const ACP_FEED_PATH = '/acp/feed/products';
const FEED_CACHE_CONTROL = 'public, max-age=300';
const SCOPE = 'cart:write';
const MAX_KEY_LENGTH = 255;

const API_VERSION_HEADER: [string, string] = ['API-Version', ACP_VERSION];
/** The checkout operations by path and method. */
const CHECKOUT_ROUTES: Array<{ path: string; methods: Partial<Record<'GET' | 'POST', AcpOperation>> }> = [
  { path: '/acp/checkout_sessions', methods: { POST: 'create' } },
  { path: '/acp/checkout_sessions/{id}', methods: { GET: 'retrieve', POST: 'update' } },
  { path: '/acp/checkout_sessions/{id}/complete', methods: { POST: 'complete' } },
  { path: '/acp/checkout_sessions/{id}/cancel', methods: { POST: 'cancel' } },
];

/** The cart operations (ACP's cart RFC) by path and method. */
const CART_ROUTES: Array<{ path: string; methods: Partial<Record<'GET' | 'POST', AcpCartOperation>> }> = [
  { path: '/acp/carts', methods: { POST: 'create' } },
  { path: '/acp/carts/{id}', methods: { GET: 'retrieve', POST: 'update' } },
  { path: '/acp/carts/{id}/cancel', methods: { POST: 'cancel' } },
];

export async function acpDiscovery(deps: Deps) {
  const { baseUrl } = deps.config;
  return {
    protocol: {
      name: 'acp',
      version: ACP_VERSION,
      supported_versions: [ACP_VERSION],
      documentation_url: `${baseUrl}/docs`,
    },
    api_base_url: `${baseUrl}/acp`,
    transports: ['rest', 'mcp'],
    capabilities: {
      services: ['checkout', 'carts'],
      extensions: [{ name: 'discount' }],
      supported_currencies: await supportedCurrencies(deps.db),
      supported_locales: ['en-US'],
    },
  };
}

/** The OAuth client the bearer token belongs to; 401 without a valid token, 403 without cart:write. */
async function authenticate(deps: Deps, exchange: ProtocolExchange): Promise<string> {
  const { resourceMetadata } = agentUrls(deps.config);
  const header = exchange.get('Authorization');
  if (!header) {
    throw new ProtocolError(
      401,
      'unauthorized',
      "Send Authorization: Bearer <ACCESS_TOKEN>; get a token with scope cart:write from this store's OAuth token endpoint.",
      {
        headers: { 'WWW-Authenticate': bearerChallenge({ resourceMetadata }) },
      },
    );
  }
  const token = parseBearerToken(header);
  const grant = token === undefined ? undefined : await findActiveGrant(deps, token);
  if (!grant) {
    throw new ProtocolError(
      401,
      'invalid_token',
      'The access token is expired, revoked, unknown or malformed; request a new one.',
      {
        headers: { 'WWW-Authenticate': bearerChallenge({ error: 'invalid_token', resourceMetadata }) },
      },
    );
  }
  if (!hasScopes(grant.scopes, [SCOPE])) {
    throw new ProtocolError(
      403,
      'insufficient_scope',
      `This API needs the scope "${SCOPE}", which the token was not granted.`,
      {
        headers: {
          'WWW-Authenticate': bearerChallenge({ error: 'insufficient_scope', scope: SCOPE, resourceMetadata }),
        },
      },
    );
  }
  return grant.clientId;
}

/** The grant an earlier read found for the request's bearer token, when it holds cart:write (see earlierGrant). */
function earlierCartGrant(deps: Deps, exchange: ProtocolExchange) {
  const token = parseBearerToken(exchange.get('Authorization'));
  const grant = token === undefined ? undefined : earlierGrant(deps, token);
  return grant && hasScopes(grant.scopes, [SCOPE]) ? grant : undefined;
}

/** API-Version (over MCP, meta.api_version, named by `param`): 2026-04-17 only. */
function checkApiVersion(version: string, param = 'API-Version'): void {
  const details = { supported_versions: [ACP_VERSION] };
  if (!version)
    throw new ProtocolError(400, 'missing_api_version', `Send API-Version: ${ACP_VERSION}.`, {
      param,
      details,
    });
  if (version !== ACP_VERSION)
    throw new ProtocolError(400, 'unsupported_api_version', `API-Version ${version} is not supported.`, {
      param,
      details,
    });
}

/** Idempotency-Key (over MCP, meta.idempotency_key, named by `param`): required on every change, 1–255 characters. */
function checkedIdempotencyKey(key: string | undefined, param = 'Idempotency-Key'): string {
  if (!key)
    throw new ProtocolError(400, 'idempotency_key_required', 'Every POST needs an Idempotency-Key header.', {
      param,
    });
  if (key.length > MAX_KEY_LENGTH)
    throw new ProtocolError(
      400,
      'invalid_idempotency_key',
      `Idempotency-Key is at most ${MAX_KEY_LENGTH} characters.`,
      { param },
    );
  return key;
}

/** The REST path of an operation, which scopes its idempotency keys over REST and MCP alike. */
function restPath(op: AcpOperation, id: string | undefined): string {
  if (op === 'create') return '/acp/checkout_sessions';
  const session = `/acp/checkout_sessions/${id ?? ''}`;
  return op === 'complete' || op === 'cancel' ? `${session}/${op}` : session;
}

/** The ACP REST binding and its discovery document. */
export function acpBinding(deps: WebDeps): ProtocolBinding {
  const { create, operations } = createAcpOperations(deps);

  const cartOperations = createAcpCartOperations(deps);

  /** API-Version, Idempotency-Key and body: the operation's call, and its key on POST. */
  async function checkedCall<Op extends string>(exchange: ProtocolExchange, route: { op: Op; id?: string }) {
    checkApiVersion(exchange.get('API-Version'));
    const mutating = exchange.method === 'POST';
    const key = mutating ? checkedIdempotencyKey(exchange.get('Idempotency-Key')) : undefined;
    if (key) exchange.set('Idempotency-Key', key);
    const body = mutating
      ? await readJsonBody(exchange, { invalidJson: 'invalid_json', mediaType: 'unsupported_media_type' })
      : { kind: 'absent' as const };
    const call = { op: route.op, id: route.id, body: body.kind === 'json' ? body.value : undefined };
    return { call, key };
  }

  /** A cart operation: bearer token, API-Version, Idempotency-Key, body, then the operation under the key. */
  async function serveCart(
    exchange: ProtocolExchange,
    route: { op: AcpCartOperation; id?: string },
  ): Promise<ProtocolAnswer> {
    const clientId = await authenticate(deps, exchange);
    const { call, key } = await checkedCall(exchange, route);
    const scope =
      key === undefined ? undefined : { scope: protocolKeys.scope.acp(clientId, exchange.path), key, body: call.body };
    const operation = { prepare: () => cartOperations.cart(clientId, call) };
    return answered(await runProtocolOperation(deps, scope, operation, renderAcpError));
  }

  /**
   * After the rate limit: route, bearer token, API-Version, Idempotency-Key, body, then the operation. A create whose
   * token this instance read earlier does not read it again: the statement that stores the create confirms the token
   * is still active (createUnderGrant). Anything else answered to it, an error of the checks included, waits for the
   * token's own read, so a revoked or expired token is refused as before, and first.
   */
  async function serveCheckout(
    exchange: ProtocolExchange,
    route: { op: AcpOperation; id?: string },
  ): Promise<ProtocolAnswer> {
    const earlier = route.op === 'create' ? earlierCartGrant(deps, exchange) : undefined;
    const clientId = earlier?.clientId ?? (await authenticate(deps, exchange));
    /** The token read, when it was taken from an earlier read, before `step`'s failure is answered. */
    const confirmingFirst = async <T>(step: () => Promise<T>): Promise<T> => {
      try {
        return await step();
      } catch (error) {
        if (earlier) await authenticate(deps, exchange);
        throw error;
      }
    };
    const { call, key } = await confirmingFirst(() => checkedCall(exchange, route));
    const scope =
      key === undefined ? undefined : { scope: protocolKeys.scope.acp(clientId, exchange.path), key, body: call.body };
    if (earlier && scope && !isCartCheckout(call.body)) {
      const grant = earlier.tokenHash;
      const stored = await confirmingFirst(() =>
        createUnderGrant(deps, scope, () => create(call, clientId), renderAcpError, grant),
      );
      if (stored) return { response: stored };
    }
    if (earlier) await authenticate(deps, exchange);
    return run(clientId, call, scope);
  }

  /** An authenticated call under its key, if it has one: the operation, or the answer stored under the key. */
  async function run(
    clientId: string,
    call: AcpCall,
    scope: { scope: string; key: string; body: unknown } | undefined,
  ): Promise<ProtocolAnswer> {
    const { op } = call;
    const operation =
      op !== 'create'
        ? { prepare: () => operations[op](call) }
        : isCartCheckout(call.body)
          ? { prepare: () => cartOperations.checkout(clientId, call.body) }
          : { create: () => create(call, clientId) };
    return answered(await runProtocolOperation(deps, scope, operation, renderAcpError));
  }

  /** An operation's outcome under its key: its answer, a replay, or the key's conflict or wait. */
  function answered(outcome: Awaited<ReturnType<typeof runProtocolOperation>>): ProtocolAnswer {
    switch (outcome.kind) {
      case 'ran':
        return { response: outcome.answer };
      case 'replayed':
        return { response: outcome.answer, headers: { 'Idempotent-Replayed': 'true' } };
      case 'conflict':
        throw new ProtocolError(
          422,
          'idempotency_conflict',
          'This Idempotency-Key was already used with a different request body; use a new key for a new request.',
          { param: 'Idempotency-Key' },
        );
      case 'in_flight':
        throw new ProtocolError(
          409,
          'idempotency_in_flight',
          'A request with this Idempotency-Key is still being processed; retry after a moment.',
          {
            param: 'Idempotency-Key',
            headers: { 'Retry-After': '1' },
          },
        );
    }
  }

  /** The MCP binding's call (src/mcp/acp-server.ts): meta's version and key checked as the headers are on REST. */
  async function runOverMcp(clientId: string, call: AcpMcpCall): Promise<ProtocolAnswer> {
    checkApiVersion(call.apiVersion, '$.meta.api_version');
    const key =
      call.op === 'retrieve' ? undefined : checkedIdempotencyKey(call.idempotencyKey, '$.meta.idempotency_key');
    const acpCall: AcpCall = { op: call.op, id: call.id, body: call.payload };
    const scope =
      key === undefined
        ? undefined
        : { scope: protocolKeys.scope.acp(clientId, restPath(call.op, call.id)), key, body: call.payload };
    return run(clientId, acpCall, scope);
  }

  /** Every answer names the version, and echoes the caller's Request-Id. */
  const opening: ProtocolBinding['opening'] = (exchange) => {
    const requestId = exchange.get('Request-Id');
    return requestId ? [API_VERSION_HEADER, ['Request-Id', requestId]] : [API_VERSION_HEADER];
  };

  /** Any failure, as ACP's flat error. */
  const failure = acpFailure;

  const checkout = (op: AcpOperation): BindingAnswer => {
    return async (ctx, { id }) =>
      sendProtocolResponse(ctx, await serveCheckout(ctx, { op, ...(id === undefined ? {} : { id }) }));
  };
  const cartRoute = (op: AcpCartOperation): BindingAnswer => {
    return async (ctx, { id }) =>
      sendProtocolResponse(ctx, await serveCart(ctx, { op, ...(id === undefined ? {} : { id }) }));
  };
  const discovery: BindingAnswer = async (ctx) => {
    const response = jsonResponse(200, await acpDiscovery(deps));
    sendProtocolResponse(ctx, { response, headers: { 'Cache-Control': DISCOVERY_CACHE_CONTROL } });
  };
  /** The catalogue as ACP's product feed: public, like the catalogue (src/services/acp-feed.ts). */
  const feed: BindingAnswer = async (ctx) => {
    const targetCountry = ctx.query.target_country;
    if (Array.isArray(targetCountry) || (targetCountry !== undefined && !isCountryCode(targetCountry)))
      throw new ProtocolError(
        400,
        'invalid_target_country',
        'target_country is one ISO 3166-1 alpha-2 country code, such as DE.',
        { param: 'target_country' },
      );
    const outcome = await readAcpFeed(deps.db, targetCountry);
    if (outcome.kind === 'country_not_served')
      throw new ProtocolError(
        400,
        'country_not_served',
        `This store does not sell to ${outcome.targetCountry}; it sells to ${outcome.served.join(', ')}.`,
        { param: 'target_country' },
      );
    const response = jsonResponse(200, { products: outcome.products });
    sendProtocolResponse(ctx, { response, headers: { 'Cache-Control': FEED_CACHE_CONTROL } });
  };
  const mcpBinding: AcpMcpBinding = {
    authenticate: (ctx) => authenticate(deps, ctx),
    execute: runOverMcp,
    failure,
    refusal: (error, log) => {
      const refused = protocolErrorOf(error, log, ACP_CODES);
      return { status: refused.status, body: acpErrorBody(refused), headers: { ...refused.options.headers } };
    },
  };
  const mcp = createAcpMcpServer(mcpBinding, deps.validators);
  const cors = mcpCors(deps.config.mcpAllowedOrigins);
  return {
    paths: ['/acp', '/acp/*', ACP_DISCOVERY_PATH],
    routes: [
      { path: ACP_DISCOVERY_PATH, methods: { GET: discovery } },
      { path: ACP_FEED_PATH, methods: { GET: feed } },
      // The MCP binding counts the request itself, so that a 429 there is a JSON-RPC error.
      {
        path: ACP_MCP_PATH,
        methods: { any: (ctx) => cors(ctx, () => serveAcpMcp(ctx, deps, mcp, mcpBinding)) as Promise<void> },
        counted: false,
      },
      ...CHECKOUT_ROUTES.map(({ path, methods }) => ({
        path,
        methods: Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, checkout(op)])),
      })),
      ...CART_ROUTES.map(({ path, methods }) => ({
        path,
        methods: Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, cartRoute(op)])),
      })),
    ],
    opening,
    failure,
  };
}
