// The ACP and UCP bindings, answered before the rest of the application: each protocol has its own check order,
// error shape, rate-limit answer and body handling, so none of the application-wide middleware below applies to them.
import type { Deps } from '../deps.js';
import type { AppMiddleware } from './context.js';
import type { RateLimiter } from './rate-limit.js';
import { isUcpPath, ucpRoutes } from './ucp.js';

/** The contract documents these operations, but they are served here, never by the contract dispatcher. */
export type ProtocolOperationId = 'getUcpProfile' | 'createUcpCheckout' | 'getUcpCheckout' | 'updateUcpCheckout' | 'completeUcpCheckout' | 'cancelUcpCheckout';

/** The bindings that are on (see ProtocolConfig); a binding that is off leaves its paths to the 404 of the rest. */
export function protocolRoutes(deps: Deps, limiter: RateLimiter): AppMiddleware {
  const ucp = deps.config.protocols.ucpDisabledReason === undefined ? ucpRoutes(deps, limiter) : undefined;
  return async (ctx, next) => {
    if (ucp && isUcpPath(ctx.path)) return ucp(ctx);
    await next();
  };
}
