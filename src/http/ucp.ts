// The UCP REST binding at /ucp, in 2026-08-25 and 2026-04-08, and its business profiles: /.well-known/ucp at the newest
// version naming the older one's profile in `supported_versions` (3.A of the design). Each request is answered in the
// version its platform profile declares. The checks
// run in the protocol's fixed order: route, UCP-Agent, Request-Id, Idempotency-Key, body, platform profile, capability
// intersection, then the idempotency claim, after which every answer below 500 is stored under the key.
import type { Deps } from '../deps.js';
import type { WebDeps } from './web-deps.js';
import {
  ucpErrorResponse,
  ucpMessage,
  UCP_CHECKOUT,
  UCP_DISCOUNT,
  UCP_FULFILLMENT,
  UCP_LATEST,
  UCP_VERSIONS,
  type UcpMessage,
  type UcpVersion,
} from '../domain/ucp-checkout.js';
import {
  createUcpOperations,
  ucpNamespace,
  type UcpAnswer,
  type UcpCall,
  type UcpErrorBody,
  type UcpExecution,
  type UcpOperation,
} from '../handlers/ucp/checkout.js';
import { createUcpShoppingOperations } from '../handlers/ucp/catalog-cart.js';
import {
  isUcpShoppingOperation,
  UCP_CART,
  UCP_CATALOG_LOOKUP,
  UCP_CATALOG_SEARCH,
  UCP_SHOPPING_OPERATIONS,
  type UcpShoppingOperation,
} from '../domain/ucp-shopping.js';
import { createUcpOrderReader, orderCapability, publishedKeys } from '../handlers/ucp/orders.js';
import { mcpCors } from '../mcp/transport.js';
import { createUcpMcpServer, serveUcpMcp, UCP_MCP_PATH } from '../mcp/ucp-server.js';
import type { ProtocolResponse } from '../protocols/answers.js';
import { protocolKeys, RawBody } from '../services/idempotency/index.js';
import {
  createProfileResolver,
  createProfileUrlReader,
  EVERY_CAPABILITY,
  type Negotiated,
  type ProfileProblem,
  type ProfileResolver,
} from '../services/ucp-profiles.js';
import type { Logger } from '../log.js';
import {
  isUuid,
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
import { renderUcpError, ucpErrorBody, ucpFailure } from './protocol-errors.js';

export const UCP_PROFILE_PATH = '/.well-known/ucp';
/** Where each older version's complete profile is served (named in the newest's `supported_versions`). */
export const UCP_VERSIONED_PROFILE_PATH = '/ucp/profiles/{version}';
const PROFILE_CACHE_CONTROL = 'public, max-age=300';

/** The checkout operations by path and method. */
export const UCP_ORDER_PATH = '/ucp/orders/{id}';

const CHECKOUT_ROUTES: Array<{ path: string; methods: Partial<Record<'GET' | 'POST' | 'PUT', UcpOperation>> }> = [
  { path: '/ucp/checkout-sessions', methods: { POST: 'create' } },
  { path: '/ucp/checkout-sessions/{id}', methods: { GET: 'get', PUT: 'update' } },
  { path: '/ucp/checkout-sessions/{id}/complete', methods: { POST: 'complete' } },
  { path: '/ucp/checkout-sessions/{id}/cancel', methods: { POST: 'cancel' } },
];

/** The catalog and cart operations by path and method (rest.openapi.json). */
const SHOPPING_ROUTES: Array<{ path: string; methods: Partial<Record<'GET' | 'POST' | 'PUT', UcpShoppingOperation>> }> =
  [
    { path: '/ucp/catalog/search', methods: { POST: 'search_catalog' } },
    { path: '/ucp/catalog/lookup', methods: { POST: 'lookup_catalog' } },
    { path: '/ucp/catalog/product', methods: { POST: 'get_product' } },
    { path: '/ucp/carts', methods: { POST: 'create_cart' } },
    { path: '/ucp/carts/{id}', methods: { GET: 'get_cart', PUT: 'update_cart' } },
    { path: '/ucp/carts/{id}/cancel', methods: { POST: 'cancel_cart' } },
  ];

/**
 * The business profile of a version (A.1): what this business offers, on which endpoints. The newest's names the older
 * versions' profiles in `supported_versions`. With AGENT_WEBHOOK_KEY set, order events are signed, and the key that
 * signs them is published (src/handlers/ucp/orders.ts).
 */
export function businessProfile(deps: Deps, version: UcpVersion = UCP_LATEST) {
  const { baseUrl } = deps.config;
  const service = (transport: 'rest' | 'mcp', endpoint: string, schema: string) => ({
    version,
    spec: `https://ucp.dev/${version}/specification/overview`,
    transport,
    endpoint,
    schema: `https://ucp.dev/${version}/services/shopping/${schema}`,
  });
  const older = version === UCP_LATEST ? UCP_VERSIONS.filter((other) => other !== UCP_LATEST) : [];
  return {
    ucp: {
      version,
      ...(older.length
        ? {
            supported_versions: Object.fromEntries(
              older.map((other) => [other, `${baseUrl}${UCP_VERSIONED_PROFILE_PATH.replace('{version}', other)}`]),
            ),
          }
        : {}),
      services: {
        'dev.ucp.shopping': [
          service('rest', `${baseUrl}/ucp`, 'rest.openapi.json'),
          service('mcp', `${baseUrl}${UCP_MCP_PATH}`, 'mcp.openrpc.json'),
        ],
      },
      capabilities: {
        [UCP_CHECKOUT]: [
          {
            version,
            spec: `https://ucp.dev/${version}/specification/checkout`,
            schema: `https://ucp.dev/${version}/schemas/shopping/checkout.json`,
          },
        ],
        [UCP_DISCOUNT]: [
          {
            version,
            spec: `https://ucp.dev/${version}/specification/discount`,
            schema: `https://ucp.dev/${version}/schemas/shopping/discount.json`,
            // discount.json composes with both (its $defs dev.ucp.shopping.checkout and dev.ucp.shopping.cart).
            extends: [UCP_CHECKOUT, UCP_CART],
          },
        ],
        [UCP_FULFILLMENT]: [
          {
            version,
            spec: `https://ucp.dev/${version}/specification/fulfillment`,
            schema: `https://ucp.dev/${version}/schemas/shopping/fulfillment.json`,
            extends: UCP_CHECKOUT,
            // One shipping address per checkout, shipping only (docs/fulfilment-and-tax.md).
            config:
              version === '2026-08-25'
                ? { multi_destination: [], method_combinations: [['shipping']] }
                : {
                    allows_multi_destination: { shipping: false, pickup: false },
                    allows_method_combinations: [['shipping']],
                  },
          },
        ],
        ...Object.fromEntries(
          [
            [UCP_CATALOG_SEARCH, 'catalog', 'catalog_search'],
            [UCP_CATALOG_LOOKUP, 'catalog', 'catalog_lookup'],
            [UCP_CART, 'cart', 'cart'],
          ].map(([name, spec, schema]) => [
            name,
            [
              {
                version,
                spec: `https://ucp.dev/${version}/specification/${spec}`,
                schema: `https://ucp.dev/${version}/schemas/shopping/${schema}.json`,
              },
            ],
          ]),
        ),
        ...orderCapability(version),
      },
      payment_handlers: {
        [`${ucpNamespace(deps, version)}.human_handoff`]: [
          {
            id: 'human_handoff',
            version,
            spec: `${baseUrl}/docs/payment-handlers/human-handoff`,
            schema: `${baseUrl}/schemas/payment-handlers/human-handoff.json`,
            available_instruments: [{ type: 'hosted_checkout' }],
            config: { instruments_accepted: false, handoff: 'continue_url' },
          },
        ],
      },
    },
    ...publishedKeys(deps, version),
  };
}

/** The 200 error_response when the platform cannot do checkout with this business (in the profile's version). */
function incompatible(baseUrl: string, version: UcpVersion): ProtocolResponse {
  const message = ucpMessage({
    type: 'error',
    code: 'capabilities_incompatible',
    severity: 'unrecoverable',
    content: `This business offers ${UCP_CHECKOUT} ${version} over rest and mcp; the platform profile does not (declare the capability at ucp.version, and a dev.ucp.shopping service at that version with transport rest or mcp).`,
  });
  return jsonResponse(200, ucpErrorResponse([message], baseUrl, version, { emptyCapabilities: true }));
}

const NOT_NEGOTIATED = ucpMessage({
  type: 'info',
  code: 'profile_not_negotiated',
  content:
    'The platform profile could not be used; this request proceeded as if it declared every capability of this business (lenient policy).',
});

interface Negotiation {
  negotiated: Negotiated;
  notes: UcpMessage[];
}

/** How each profile problem is answered: UCP's status for it. */
const PROFILE_PROBLEM_STATUS: Record<ProfileProblem, number> = {
  invalid_profile_url: 400,
  profile_unreachable: 424,
  profile_malformed: 422,
  version_unsupported: 422,
};

/** The capability an operation needs negotiated (the checkout's, or the catalog's and cart's own). */
type Required = keyof typeof EVERY_CAPABILITY;

/** Steps 6–7: the platform profile, its version and the capability intersection (or the lenient fallback). */
async function negotiateWith(
  deps: Deps,
  profiles: ProfileResolver,
  profileUrl: string,
  address: string,
  required?: Required,
): Promise<Negotiation | { refused: Negotiated }> {
  const lenient = deps.config.protocols.profilePolicy === 'lenient';
  const result = await profiles(profileUrl, address);
  if (!result.ok) {
    if (result.problem === 'invalid_profile_url' || !lenient) {
      throw new ProtocolError(PROFILE_PROBLEM_STATUS[result.problem], result.problem, result.content);
    }
    return { negotiated: { version: UCP_LATEST, ...EVERY_CAPABILITY }, notes: [NOT_NEGOTIATED] };
  }
  const { negotiated, notes } = result;
  if (!required || negotiated[required]) return { negotiated, notes };
  if (lenient) return { negotiated: { ...negotiated, ...EVERY_CAPABILITY }, notes: [...notes, NOT_NEGOTIATED] };
  return { refused: negotiated };
}

function requiredUuidHeader(
  exchange: ProtocolExchange,
  name: string,
  codes: { missing: string; invalid: string },
): string {
  const value = exchange.get(name);
  if (!value) throw new ProtocolError(400, codes.missing, `The ${name} header is required.`, { param: name });
  if (!isUuid(value)) throw new ProtocolError(400, codes.invalid, `${name} must be a UUID.`, { param: name });
  return value;
}

/** The process's one resolver of platform profiles (its cache and fetch budget), built by the service (src/service.ts). */
export function profileResolverOf(deps: Deps): ProfileResolver {
  return createProfileResolver({
    config: deps.config.protocols,
    egressAllowedHosts: deps.config.egressAllowedHosts,
    fetchBudget: deps.profileFetchLimiter,
    log: deps.log,
    validators: deps.validators,
    tracing: deps.tracing,
  });
}

/** Negotiates, claims the key and runs the operation; protocol errors before the claim (and conflicts) are thrown. */
export function createUcpExecutor(
  deps: Deps & Pick<WebDeps, 'profiles'>,
): (execution: UcpExecution) => Promise<UcpAnswer> {
  const { create, operations } = createUcpOperations(deps);
  const shopping = createUcpShoppingOperations(deps);
  const { profiles } = deps;
  const { baseUrl } = deps.config;
  return async ({ profileUrl, address, op, id, body, idempotency }) => {
    // This call's rendered errors, by the response that renders them (the one answered, or one a retry replaced).
    const failures = new Map<ProtocolResponse, UcpErrorBody>();
    const render = (error: ProtocolError) => {
      const body = ucpErrorBody(error, `${baseUrl}/`);
      const response = renderUcpError(error, baseUrl, body);
      failures.set(response, body);
      return response;
    };
    const shoppingOp = isUcpShoppingOperation(op) ? op : undefined;
    const required = shoppingOp ? UCP_SHOPPING_OPERATIONS[shoppingOp].capability : 'checkout';
    const negotiation = await negotiateWith(deps, profiles, profileUrl, address, required);
    if ('refused' in negotiation) {
      const { version } = negotiation.refused;
      const response = shoppingOp
        ? shopping.incompatible(shoppingOp, { op, id, body, negotiated: negotiation.refused, notes: [] })
        : incompatible(baseUrl, version);
      return { response, replayed: false };
    }
    const call: UcpCall = { op, id, body, profileUrl, ...negotiation };
    // 2026-08-25 fingerprints a key's request by its exact bytes; 2026-04-08 (and MCP's arguments) by RFC 8785 JSON.
    const raw = negotiation.negotiated.version === '2026-08-25' ? idempotency?.raw : undefined;
    const scope = idempotency && {
      scope: idempotency.scope,
      key: idempotency.key,
      body: raw ? new RawBody(raw) : idempotency.hashed,
    };
    // A create naming a cart converts it, when the cart capability is negotiated (cart.json `$defs/checkout`).
    const converts =
      op === 'create' && call.negotiated.cart && typeof (body as { cart_id?: unknown } | null)?.cart_id === 'string';
    const operation =
      op === 'create_cart'
        ? { create: () => shopping.createCart(call) }
        : shoppingOp
          ? { prepare: () => shopping.operations[shoppingOp as Exclude<UcpShoppingOperation, 'create_cart'>](call) }
          : converts
            ? { prepare: () => shopping.convertCart(call) }
            : op === 'create'
              ? { create: () => create(call) }
              : { prepare: () => operations[op as Exclude<UcpOperation, 'create'>](call) };
    const outcome = await runProtocolOperation(deps, scope, operation, render);
    switch (outcome.kind) {
      case 'ran':
        return { response: outcome.answer, replayed: false, failure: failures.get(outcome.answer) };
      case 'replayed':
        return { response: outcome.answer, replayed: true };
      case 'conflict':
        throw new ProtocolError(
          409,
          'idempotency_conflict',
          'This Idempotency-Key was already used with different parameters; use a new key for a new request.',
          { param: 'Idempotency-Key' },
        );
      case 'in_flight':
        throw new ProtocolError(
          503,
          'idempotency_in_flight',
          'A request with this Idempotency-Key is still being processed; retry shortly.',
          { headers: { 'Retry-After': '1' } },
        );
    }
  };
}

/** The UCP REST binding, its business profile and its MCP endpoint. */
export function ucpBinding(deps: WebDeps): ProtocolBinding {
  const execute = createUcpExecutor(deps);
  const { baseUrl } = deps.config;
  // Orders need no capability negotiated here: the reader answers a profile without the order capability itself. The
  // profiles are the executor's: one cache and one fetch budget for checkouts and order reads alike.
  const readOrder = createUcpOrderReader(deps, async (profileUrl, address) => {
    const negotiation = await negotiateWith(deps, deps.profiles, profileUrl, address);
    return 'refused' in negotiation ? incompatible(baseUrl, negotiation.refused.version) : negotiation;
  });
  // get_order runs the same reader as GET /ucp/orders/{id}.
  const mcp = createUcpMcpServer({ execute, readOrder }, deps.validators);
  const profileUrlOf = createProfileUrlReader();

  /** Steps 1–12 of A.3 after the rate limit: route, UCP-Agent, Request-Id, Idempotency-Key, body, then the operation. */
  async function serveCheckout(
    exchange: ProtocolExchange,
    route: { op: UcpOperation | UcpShoppingOperation; id?: string },
  ): Promise<ProtocolAnswer> {
    const profileUrl = profileUrlOf(exchange.get('UCP-Agent'));
    if (!profileUrl) {
      throw new ProtocolError(
        400,
        'invalid_profile_url',
        'UCP-Agent must be a structured-field dictionary whose profile member is an absolute URL: profile="https://…".',
        { param: 'UCP-Agent' },
      );
    }
    const requestId = requiredUuidHeader(exchange, 'Request-Id', {
      missing: 'request_id_required',
      invalid: 'invalid_request_id',
    });
    exchange.set('Request-Id', requestId);
    const mutating = exchange.method === 'POST' || exchange.method === 'PUT';
    // The catalog's POSTs only read: they take no key (rest.openapi.json).
    const keyed = mutating && (!isUcpShoppingOperation(route.op) || UCP_SHOPPING_OPERATIONS[route.op].keyed);
    const key = keyed
      ? requiredUuidHeader(exchange, 'Idempotency-Key', {
          missing: 'idempotency_key_required',
          invalid: 'invalid_idempotency_key',
        })
      : undefined;
    const read = mutating
      ? await readJsonBody(exchange, { invalidJson: 'invalid_json', mediaType: 'unsupported_media_type' })
      : { kind: 'absent' as const };
    const body = read.kind === 'json' ? read.value : undefined;
    const idempotency =
      key === undefined
        ? undefined
        : {
            key,
            scope: protocolKeys.scope.ucp(profileUrl, exchange.method, exchange.path),
            hashed: body,
            raw: read.raw ?? Buffer.alloc(0),
          };
    const answer = await execute({ profileUrl, address: exchange.ip, op: route.op, id: route.id, body, idempotency });
    return { response: answer.response, headers: answer.replayed ? { 'Idempotent-Replayed': 'true' } : {} };
  }

  /** GET /ucp/orders/{id}: UCP-Agent and Request-Id checked as for a checkout read, then the order capability. */
  async function order(exchange: ProtocolExchange, id: string): Promise<ProtocolAnswer> {
    const profileUrl = profileUrlOf(exchange.get('UCP-Agent'));
    if (!profileUrl)
      throw new ProtocolError(
        400,
        'invalid_profile_url',
        'UCP-Agent must name the platform profile: profile="https://…".',
        {
          param: 'UCP-Agent',
        },
      );
    const requestId = requiredUuidHeader(exchange, 'Request-Id', {
      missing: 'request_id_required',
      invalid: 'invalid_request_id',
    });
    exchange.set('Request-Id', requestId);
    return { response: await readOrder({ profileUrl, address: exchange.ip, id }), headers: {} };
  }

  /** Any failure on a UCP surface, as UCP's protocol error. */
  const failure = (error: unknown, log: () => Logger): ProtocolResponse => ucpFailure(error, log, baseUrl);

  const cors = mcpCors(deps.config.mcpAllowedOrigins);
  const checkout = (op: UcpOperation | UcpShoppingOperation): BindingAnswer => {
    return async (ctx, { id }) =>
      sendProtocolResponse(ctx, await serveCheckout(ctx, { op, ...(id === undefined ? {} : { id }) }));
  };
  const profile =
    (version: UcpVersion): BindingAnswer =>
    async (ctx) => {
      const response = jsonResponse(200, businessProfile(deps, version));
      sendProtocolResponse(ctx, { response, headers: { 'Cache-Control': PROFILE_CACHE_CONTROL } });
    };
  return {
    paths: ['/ucp', '/ucp/*', UCP_PROFILE_PATH],
    routes: [
      { path: UCP_PROFILE_PATH, methods: { GET: profile(UCP_LATEST) } },
      ...UCP_VERSIONS.filter((version) => version !== UCP_LATEST).map((version) => ({
        path: UCP_VERSIONED_PROFILE_PATH.replace('{version}', version),
        methods: { GET: profile(version) },
      })),
      // The MCP binding counts the request itself, so that a 429 there is a JSON-RPC error.
      {
        path: UCP_MCP_PATH,
        methods: { any: (ctx) => cors(ctx, () => serveUcpMcp(ctx, deps, mcp)) as Promise<void> },
        counted: false,
      },
      {
        path: UCP_ORDER_PATH,
        methods: { GET: async (ctx, { id }) => sendProtocolResponse(ctx, await order(ctx, id!)) },
      },
      ...[...CHECKOUT_ROUTES, ...SHOPPING_ROUTES].map(({ path, methods }) => ({
        path,
        methods: Object.fromEntries(Object.entries(methods).map(([method, op]) => [method, checkout(op)])),
      })),
    ],
    opening: () => [],
    failure,
  };
}
