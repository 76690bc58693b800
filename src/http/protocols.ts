// The ACP and UCP bindings, answered before the rest of the application: each protocol has its own check order,
// error shape, rate-limit answer and body handling, so none of the application-wide middleware below applies to them.
import type { Deps } from '../deps.js';
import type { AppMiddleware } from './context.js';
import { acpRoutes, isAcpPath } from './acp.js';
import { isUcpPath, ucpRoutes } from './ucp.js';

/** The contract documents these operations, but they are served here, never by the contract dispatcher. */
export type ProtocolOperationId =
  | 'getUcpProfile'
  | 'createUcpCheckout'
  | 'getUcpCheckout'
  | 'updateUcpCheckout'
  | 'completeUcpCheckout'
  | 'cancelUcpCheckout'
  | 'callUcpMcp'
  | 'preflightUcpMcp'
  | 'getAcpDiscovery'
  | 'createAcpCheckoutSession'
  | 'getAcpCheckoutSession'
  | 'updateAcpCheckoutSession'
  | 'completeAcpCheckoutSession'
  | 'cancelAcpCheckoutSession';

/** The bindings that are on (see ProtocolConfig); a binding that is off leaves its paths to the 404 of the rest. */
export function protocolRoutes(deps: Deps): AppMiddleware {
  const ucp = deps.config.protocols.ucpDisabledReason === undefined ? ucpRoutes(deps) : undefined;
  // ACP needs no https, only the namespace its payment handler is named in.
  const acp = deps.config.protocols.namespace === undefined ? undefined : acpRoutes(deps);
  return async (ctx, next) => {
    if (ucp && isUcpPath(ctx.path)) return ucp(ctx);
    if (acp && isAcpPath(ctx.path)) return acp(ctx);
    await next();
  };
}
