// The Koa application: the middleware chain in order, then the contract dispatcher.
import Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { parseBodies } from './body.js';
import { noStoreByDefault, serveCachedReads } from './caching.js';
import type { AppMiddleware, AppState } from './context.js';
import { publicCors } from './cors.js';
import { errorHandler } from './error-handler.js';
import { closeConnectionsWhileDraining } from './draining.js';
import { dispatchContract } from './openapi.js';
import { rateLimitByAddress, type RateLimiter } from './rate-limit.js';
import { requestContext } from './request-context.js';
import { securityHeaders } from './security-headers.js';
import { checkoutVersioning, retirementNotices } from './versioning.js';

export interface AppParts {
  deps: Deps;
  contract: OpenAPIBackend;
  rateLimiter: RateLimiter;
  /** Routes served outside the contract dispatcher (MCP), tried first. */
  extraRoutes?: AppMiddleware;
  /** Paths served by `extraRoutes`, which read their own bodies and apply their own Origin policy. */
  selfServedPaths?: (path: string) => boolean;
  /** The ACP/UCP bindings: complete pipelines of their own, tried before CORS, the rate limit and body parsing. */
  protocolRoutes?: AppMiddleware;
}

export function createApp({ deps, contract, rateLimiter, extraRoutes, selfServedPaths = () => false, protocolRoutes }: AppParts): Koa<AppState> {
  // Behind N trusted proxies the client address is the Nth X-Forwarded-For entry from the right: entries further left
  // were written by the client and prove nothing.
  const hops = deps.config.trustedProxyHops;
  const app = new Koa<AppState>({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are logged once, by the error handler
  app.use(closeConnectionsWhileDraining(deps.lifecycle));
  app.use(requestContext(deps.log));
  app.use(securityHeaders());
  app.use(noStoreByDefault());
  app.use(errorHandler());
  if (protocolRoutes) app.use(protocolRoutes);
  // CORS first, so that a browser can read even a 429 (and its Retry-After).
  app.use(publicCors(selfServedPaths));
  app.use(rateLimitByAddress(rateLimiter));
  app.use(retirementNotices(deps.deprecations, `${deps.config.baseUrl}/changelog`));
  app.use(checkoutVersioning());
  app.use(parseBodies(selfServedPaths));
  app.use(serveCachedReads(deps.readCache));
  if (extraRoutes) app.use(extraRoutes);
  app.use(dispatchContract(contract));
  return app;
}
