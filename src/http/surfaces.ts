// Every request belongs to one surface, found from its path by one router (find-my-way); each surface lists, in order,
// the steps a request passes before its operation runs, and the shape its errors take. This is the one place to read
// what happens to a request: no step looks at the path to decide what to do (the contract's router then finds the
// operation). A new surface (a protocol binding, a webhook) is one entry in SURFACES and one pipeline in `pipelines`.
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import compose from 'koa-compose';
import compress from 'koa-compress';
import type { WebDeps as Deps } from './web-deps.js';
import { resolveBearer } from './agent-auth.js';
import { parseBodies } from './body.js';
import type { AppMiddleware } from './context.js';
import { publicCors } from './cors.js';
import { renderErrorsAs } from './error-handler.js';
import { isDecodable, type ErrorShape } from './errors.js';
import { dispatchContract, type Contract } from './openapi.js';
import { protocolRoutes, type ProtocolBindings } from './protocols.js';
import {
  limitByAddress,
  limitByAddressAndClient,
  limitRegistrations,
  limitWebhookRefusals,
  type RateLimiter,
} from './rate-limit.js';
import { mcpCors } from '../mcp/transport.js';
import { checkoutVersioning, retirementNotices } from './versioning.js';

interface SurfaceRoutes {
  /** find-my-way paths; `*` matches the rest of the path. */
  paths: string[];
  /** Only these methods (all when absent); other methods on the paths fall to the next surface that has them. */
  methods?: HTTPMethod[];
  /** The documented shape its errors take; absent for a surface that renders its own (the protocol bindings). */
  errors?: ErrorShape;
}

const SURFACES = {
  checkout: {
    paths: ['/checkout-sessions', '/checkout-sessions/*', '/checkout_sessions', '/checkout_sessions/*'],
    errors: 'checkout',
  },
  agent: { paths: ['/agent', '/agent/*'], errors: 'oauth' },
  registration: { paths: ['/oauth/register'], methods: ['POST'], errors: 'oauth' },
  oauth: { paths: ['/oauth', '/oauth/*', '/.well-known', '/.well-known/*'], errors: 'oauth' },
  mcp: { paths: ['/catalog/mcp', '/checkout/mcp'], errors: 'mcp' },
  pages: { paths: ['/pay', '/pay/*', '/orders', '/orders/*'], errors: 'page' },
  webhooks: { paths: ['/webhooks/*'], errors: 'read' },
  /** The ACP/UCP bindings (src/http/protocols.ts): each checks, counts and answers errors in its protocol's order and shape. */
  protocols: { paths: ['/ucp', '/ucp/*', '/.well-known/ucp', '/acp', '/acp/*', '/.well-known/acp.json'] },
  liveness: { paths: ['/healthz'], errors: 'read' },
  /** The published contract and its HTML reference (megabytes, rarely changing): compressed when the client accepts it. */
  published: { paths: ['/openapi.json', '/docs'], errors: 'read' },
  /** Everything else: the public catalogue, the changelog, readiness, the site icon, and unknown paths. */
  reads: { paths: [], errors: 'read' },
} satisfies Record<string, SurfaceRoutes>;

export type SurfaceName = keyof typeof SURFACES;

export interface SurfaceParts {
  deps: Deps;
  contract: Contract;
  /** Requests per address (and per OAuth client) per minute. */
  limiter: RateLimiter;
  /** Registrations per address. */
  registrationLimiter: RateLimiter;
  /** Refused webhook requests per address (limitWebhookRefusals). */
  webhookRefusalLimiter: RateLimiter;
  /** The MCP servers (src/mcp), which read their own bodies and apply their own Origin policy. */
  mcp: AppMiddleware;
  /** The protocol bindings that are on; a binding switched off leaves its paths to the reads surface (a 404). */
  protocols: ProtocolBindings;
}

/** The steps of each surface, in order, after its error rendering; the last one answers. */
function pipelines({
  deps,
  contract,
  limiter,
  registrationLimiter,
  webhookRefusalLimiter,
  mcp,
  protocols,
}: SurfaceParts): Record<SurfaceName, AppMiddleware[]> {
  const operation = dispatchContract(contract);
  const notices = retirementNotices(deps.deprecations, `${deps.config.baseUrl}/changelog`);
  const byAddress = limitByAddress(limiter);
  // CORS comes before the limiter, so that a browser can read even a 429 (and its Retry-After).
  const cors = publicCors();
  return {
    reads: [cors, byAddress, notices, operation],
    checkout: [cors, byAddress, notices, checkoutVersioning(), parseBodies(), operation],
    // Scopes are checked by the operation's security step (agent-auth.ts requireScopes), which reads resolveBearer's grant.
    agent: [resolveBearer(deps), limitByAddressAndClient(limiter), notices, parseBodies(), operation],
    registration: [byAddress, limitRegistrations(registrationLimiter), notices, parseBodies(), operation],
    oauth: [byAddress, notices, parseBodies(), operation],
    // As on the public surfaces, CORS (for MCP_ALLOWED_ORIGINS only) comes before the limiter.
    mcp: [mcpCors(deps.config.mcpAllowedOrigins), byAddress, notices, mcp],
    pages: [cors, byAddress, notices, parseBodies(), operation],
    // Server to server (no CORS); the body parser keeps the raw bytes, which the processor's signature covers. The
    // signature authenticates: only refused requests count, on a budget of their own, not the anonymous one.
    webhooks: [limitWebhookRefusals(webhookRefusalLimiter), notices, parseBodies(), operation],
    protocols: [protocolRoutes(protocols)],
    // The liveness probe must answer however busy the balancer's address is, and without touching Redis.
    liveness: [operation],
    // br or gzip only (no zstd, no deflate): the encodings the contract names.
    published: [cors, byAddress, notices, compress({ zstd: false, deflate: false }), operation],
  };
}

const ROUTED_METHODS: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const router = FindMyWay({ ignoreTrailingSlash: true });
for (const [name, routes] of Object.entries(SURFACES) as Array<[SurfaceName, SurfaceRoutes]>) {
  for (const path of routes.paths) router.on(routes.methods ?? ROUTED_METHODS, path, () => undefined, { name });
}

export function surfaceOf(method: string, path: string): SurfaceName {
  const routed = ROUTED_METHODS.includes(method as HTTPMethod) ? (method as HTTPMethod) : 'GET';
  // A path that is not valid percent-encoding still belongs to its surface (and answers 404 in its shape).
  const found = router.find(routed, isDecodable(path) ? path : encodeURI(path));
  return (found?.store as { name: SurfaceName } | undefined)?.name ?? 'reads';
}

/** Routes each request to its surface's pipeline; a request a pipeline passes on goes to the reads surface. */
export function routeToSurfaces(parts: SurfaceParts): AppMiddleware {
  const steps = pipelines(parts);
  const composed = Object.fromEntries(
    (Object.entries(SURFACES) as Array<[SurfaceName, SurfaceRoutes]>).map(([name, { errors }]) => [
      name,
      compose(errors ? [renderErrorsAs(errors), ...steps[name]] : steps[name]),
    ]),
  ) as Record<SurfaceName, AppMiddleware>;
  return (ctx, next) => composed[surfaceOf(ctx.method, ctx.path)](ctx, () => composed.reads(ctx, next));
}
