// The Koa application: the middleware chain in order, then the contract dispatcher.
import Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { parseBodies } from './body.js';
import { noStoreByDefault } from './caching.js';
import type { AppMiddleware, AppState } from './context.js';
import { errorHandler } from './error-handler.js';
import { dispatchContract } from './openapi.js';
import { rateLimitByAddress, type RateLimiter } from './rate-limit.js';
import { requestContext } from './request-context.js';
import { securityHeaders } from './security-headers.js';

export interface AppParts {
  deps: Deps;
  contract: OpenAPIBackend;
  rateLimiter: RateLimiter;
  /** Routes served outside the contract dispatcher (MCP), tried first. */
  extraRoutes?: AppMiddleware;
  /** Paths whose bodies their own handler reads. */
  rawBodyPaths?: (path: string) => boolean;
}

export function createApp({ deps, contract, rateLimiter, extraRoutes, rawBodyPaths = () => false }: AppParts): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: deps.config.trustProxy });
  app.silent = true; // errors are logged once, by the error handler
  app.use(requestContext(deps.log));
  app.use(securityHeaders());
  app.use(noStoreByDefault());
  app.use(errorHandler());
  app.use(rateLimitByAddress(rateLimiter));
  app.use(parseBodies(rawBodyPaths));
  if (extraRoutes) app.use(extraRoutes);
  app.use(dispatchContract(contract));
  return app;
}
