// The ACP and UCP bindings, answered before the rest of the application: each protocol has its own check order,
// error shape, rate-limit answer and body handling, so none of the application-wide middleware below applies to them.
import type { WebDeps } from './web-deps.js';
import type { AppMiddleware } from './context.js';
import { acpBinding } from './acp.js';
import type { ProtocolBinding } from './protocol-io.js';
import { ucpBinding } from './ucp.js';

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
export interface ProtocolBindings {
  ucp?: ProtocolBinding;
  acp?: ProtocolBinding;
}

export function protocolBindings(deps: WebDeps): ProtocolBindings {
  return {
    ...(deps.config.protocols.ucpDisabledReason === undefined ? { ucp: ucpBinding(deps) } : {}),
    // ACP needs no https, only the namespace its payment handler is named in.
    ...(deps.config.protocols.namespace === undefined ? {} : { acp: acpBinding(deps) }),
  };
}

/** Serves each binding's paths; every other request goes on. */
export function protocolRoutes(bindings: ProtocolBindings): AppMiddleware {
  const on = Object.values(bindings);
  return async (ctx, next) => {
    const binding = on.find((candidate) => candidate.owns(ctx.path));
    if (binding) return binding.serve(ctx);
    await next();
  };
}
