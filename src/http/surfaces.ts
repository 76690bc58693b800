// The table every route's pipeline is compiled from (src/http/routes.ts), read once at start. Every request belongs to
// one surface; each surface lists, in order, the steps a request passes before its route answers, and how its errors
// are rendered. A step is a factory: given the route it is compiled for, it returns its middleware, or nothing where it
// means nothing (the retirement notices of a route nobody retires, the body reader of an operation that takes none),
// as node-oidc-provider builds one stack per endpoint and Fastify keeps only the hooks a route has. No step looks at
// a request's path to decide what to do.
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import compress from 'koa-compress';
import type { Operation } from 'openapi-backend';
import type { WebDeps as Deps } from './web-deps.js';
import { resolveBearer } from './agent-auth.js';
import { parseBodies } from './body.js';
import { readCacheStep } from './caching.js';
import type { AppMiddleware } from './context.js';
import { publicCors } from './cors.js';
import { renderErrorsAs } from './error-handler.js';
import type { ErrorShape } from './errors.js';
import { sendProtocolResponse, type ProtocolBinding } from './protocol-io.js';
import type { ReadKeys } from '../ports.js';
import {
  limitByAddress,
  limitByAddressAndClient,
  limitRegistrations,
  limitWebhookRefusals,
  type RateLimiter,
} from './rate-limit.js';
import { mcpCors } from '../mcp/transport.js';
import { checkoutVersioning, retirementNotices } from './versioning.js';

/** What a step is compiled for: one method of one route, or a surface's answer to a request no route serves. */
export interface RouteSpec {
  /** The request method, or undefined for a surface's 404 and 405 (any method). */
  method: string | undefined;
  /** The path template (`/checkout_sessions/{id}`), or the surface's prefix for its 404 and 405. */
  path: string;
  /** The contract's operation, when the route is one. */
  operation?: Operation;
  /** Whether the route reads a request body through the shared reader (src/http/body.ts). */
  readsBody: boolean;
}

/** A step compiled for a route, or undefined where it does nothing for that route. */
export type Step = (route: RouteSpec) => AppMiddleware | undefined;

interface SurfaceRoutes {
  /** find-my-way paths; `*` matches the rest of the path. */
  paths: string[];
  /** Only these methods (all when absent); other methods on the paths belong to the next surface that has them. */
  methods?: HTTPMethod[];
}

/** Which surface each path belongs to: read when the routes are compiled, never per request. */
const SURFACE_PATHS = {
  checkout: {
    paths: ['/checkout-sessions', '/checkout-sessions/*', '/checkout_sessions', '/checkout_sessions/*'],
  },
  agent: { paths: ['/agent', '/agent/*'] },
  /** The merchant's API: the agent surface's steps, with admin scopes (src/http/agent-auth.ts checks them). */
  admin: { paths: ['/admin', '/admin/*'] },
  registration: { paths: ['/oauth/register'], methods: ['POST'] },
  oauth: { paths: ['/oauth', '/oauth/*', '/.well-known', '/.well-known/*'] },
  mcp: { paths: ['/catalog/mcp', '/checkout/mcp'] },
  pages: { paths: ['/pay', '/pay/*', '/orders', '/orders/*'] },
  webhooks: { paths: ['/webhooks/*'] },
  liveness: { paths: ['/healthz'] },
  /** The published contract and its HTML reference (megabytes, rarely changing): compressed when the client accepts it. */
  published: { paths: ['/openapi.json', '/docs'] },
  /** Everything else: the public catalogue, the changelog, readiness, the site icon, and unknown paths. */
  reads: { paths: [] },
} satisfies Record<string, SurfaceRoutes>;

/** The surfaces of the contract's own routes; the protocol bindings' surfaces are theirs (ProtocolBinding). */
export type SurfaceName = keyof typeof SURFACE_PATHS;

/** A surface's pipeline: how its errors are rendered (the first step), then its steps in order. */
export interface Surface {
  /** Its name in the metrics (`surface` label): a SurfaceName, or a protocol binding's. */
  name: string;
  errors: AppMiddleware;
  steps: Step[];
}

export interface SurfaceParts {
  deps: Deps;
  /** The read cache and the keys of what each cacheable operation's requests mean. */
  reads: { cacheable: ReadonlySet<string>; keys: ReadKeys };
  /** Requests per address (and per OAuth client) per minute. */
  limiter: RateLimiter;
  /** Registrations per address. */
  registrationLimiter: RateLimiter;
  /** Refused webhook requests per address (limitWebhookRefusals). */
  webhookRefusalLimiter: RateLimiter;
}

const ROUTED_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const classifier = FindMyWay({ ignoreTrailingSlash: true });
for (const [name, routes] of Object.entries(SURFACE_PATHS) as Array<[SurfaceName, SurfaceRoutes]>) {
  for (const path of routes.paths) classifier.on(routes.methods ?? ROUTED_METHODS, path, () => undefined, { name });
}

/** The surface a route (a path template, a method) belongs to; compile time only. */
export function surfaceOf(method: string, path: string): SurfaceName {
  const routed = ROUTED_METHODS.includes(method as HTTPMethod) ? (method as HTTPMethod) : 'GET';
  const found = classifier.find(routed, path.replace(/\{[^}]+\}/g, 'x'));
  return (found?.store as { name: SurfaceName } | undefined)?.name ?? 'reads';
}

/** Each surface's own paths (its prefixes and wildcards), for the 404 and 405 of a path no route serves. */
export function surfacePaths(): Array<{ path: string; surface: SurfaceName }> {
  return (Object.entries(SURFACE_PATHS) as Array<[SurfaceName, SurfaceRoutes]>).flatMap(([surface, routes]) =>
    routes.methods ? [] : routes.paths.map((path) => ({ path, surface })),
  );
}

/** A step that is the same middleware on every route. */
const always =
  (middleware: AppMiddleware): Step =>
  () =>
    middleware;

/** Renders whatever a later step throws in the surface's documented shape. */
const errorsAs = (shape: ErrorShape) => renderErrorsAs(shape);

/** Renders whatever a later step throws as the protocol binding's own error. */
export function protocolErrors(binding: Pick<ProtocolBinding, 'failure'>): AppMiddleware {
  return (ctx, next) =>
    next().then(undefined, (error: unknown) => {
      sendProtocolResponse(ctx, { response: binding.failure(error, () => ctx.state.log) });
    });
}

/**
 * Retirement notices (Deprecation, Sunset, Link): compiled per route (src/http/versioning.ts), in only on routes an
 * announced retirement can apply to.
 */
function notices(deps: Deps): Step {
  const changelogUrl = `${deps.config.baseUrl}/changelog`;
  return ({ method, path }) => retirementNotices(deps.deprecations, changelogUrl, { method, path });
}

/** The body reader, on routes that read a body. */
const bodies = (): Step => {
  const parse = parseBodies();
  return ({ readsBody }) => (readsBody ? parse : undefined);
};

/** The read cache, on the operations the contract marks `x-cacheable` (src/http/caching.ts). */
function readCache(deps: Deps, { cacheable, keys }: SurfaceParts['reads']): Step {
  return ({ operation }) => {
    if (!operation?.operationId || !cacheable.has(operation.operationId)) return undefined;
    const parameters = (operation.parameters ?? []) as Parameters<typeof readCacheStep>[3];
    return readCacheStep(deps.readCache, keys, operation.operationId, parameters, deps.validators);
  };
}

/** The steps of each surface of the contract's routes, in order, after its error rendering; the route answers last. */
export function surfaces({
  deps,
  reads,
  limiter,
  registrationLimiter,
  webhookRefusalLimiter,
}: SurfaceParts): Record<SurfaceName, Surface> {
  const notice = notices(deps);
  const byAddress = always(limitByAddress(limiter));
  // CORS comes before the limiter, so that a browser can read even a 429 (and its Retry-After).
  const cors = always(publicCors());
  const body = bodies();
  return {
    reads: { name: 'reads', errors: errorsAs('read'), steps: [cors, byAddress, notice, readCache(deps, reads)] },
    checkout: {
      name: 'checkout',
      errors: errorsAs('checkout'),
      steps: [cors, byAddress, notice, always(checkoutVersioning()), body],
    },
    // Scopes are checked by the operation's security step (agent-auth.ts requireScopes), which reads resolveBearer's grant.
    agent: {
      name: 'agent',
      errors: errorsAs('oauth'),
      steps: [always(resolveBearer(deps)), always(limitByAddressAndClient(limiter)), notice, body],
    },
    // The same bearer tokens and scope checks as the agent surface; the operations name the admin scopes they need.
    admin: {
      name: 'admin',
      errors: errorsAs('oauth'),
      steps: [always(resolveBearer(deps)), always(limitByAddressAndClient(limiter)), notice, body],
    },
    registration: {
      name: 'registration',
      errors: errorsAs('oauth'),
      steps: [byAddress, always(limitRegistrations(registrationLimiter)), notice, body],
    },
    oauth: { name: 'oauth', errors: errorsAs('oauth'), steps: [byAddress, notice, body] },
    // As on the public surfaces, CORS (for MCP_ALLOWED_ORIGINS only) comes before the limiter.
    mcp: {
      name: 'mcp',
      errors: errorsAs('mcp'),
      steps: [always(mcpCors(deps.config.mcpAllowedOrigins)), byAddress, notice],
    },
    pages: { name: 'pages', errors: errorsAs('page'), steps: [cors, byAddress, notice, body] },
    // Server to server (no CORS); the body parser keeps the raw bytes, which the processor's signature covers. The
    // signature authenticates: only refused requests count, on a budget of their own, not the anonymous one.
    webhooks: {
      name: 'webhooks',
      errors: errorsAs('read'),
      steps: [always(limitWebhookRefusals(webhookRefusalLimiter)), notice, body],
    },
    // The liveness probe must answer however busy the balancer's address is, and without touching Redis.
    liveness: { name: 'liveness', errors: errorsAs('read'), steps: [] },
    // br or gzip only (no zstd, no deflate): the encodings the contract names.
    published: {
      name: 'published',
      errors: errorsAs('read'),
      steps: [cors, byAddress, notice, always(compress({ zstd: false, deflate: false }) as AppMiddleware)],
    },
  };
}
