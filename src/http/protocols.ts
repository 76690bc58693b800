// The ACP and UCP bindings that are on. Each has its own check order, error shape, rate-limit answer and body handling;
// the one router (src/http/routes.ts) serves their routes with the steps every request takes and the binding's own.
import type { WebDeps as Deps } from './web-deps.js';
import { acpBinding } from './acp.js';
import type { ProtocolBinding } from './protocol-io.js';
import { ucpBinding } from './ucp.js';

/** The contract documents these operations, but they are served here, never by the contract dispatcher. */
export type ProtocolOperationId =
  | 'getUcpProfile'
  | 'getUcpVersionedProfile'
  | 'createUcpCheckout'
  | 'getUcpCheckout'
  | 'updateUcpCheckout'
  | 'completeUcpCheckout'
  | 'cancelUcpCheckout'
  | 'searchUcpCatalog'
  | 'lookupUcpCatalog'
  | 'getUcpProduct'
  | 'createUcpCart'
  | 'getUcpCart'
  | 'updateUcpCart'
  | 'cancelUcpCart'
  | 'getUcpOrder'
  | 'callUcpMcp'
  | 'preflightUcpMcp'
  | 'getAcpDiscovery'
  | 'getAcpProductFeed'
  | 'callAcpMcp'
  | 'preflightAcpMcp'
  | 'createAcpCheckoutSession'
  | 'getAcpCheckoutSession'
  | 'updateAcpCheckoutSession'
  | 'completeAcpCheckoutSession'
  | 'cancelAcpCheckoutSession'
  | 'createAcpCart'
  | 'getAcpCart'
  | 'updateAcpCart'
  | 'cancelAcpCart';

/** The bindings that are on (see ProtocolConfig); a binding that is off leaves its paths to the 404 of the rest. */
export interface ProtocolBindings {
  ucp?: ProtocolBinding;
  acp?: ProtocolBinding;
}

export function protocolBindings(deps: Deps): ProtocolBindings {
  return {
    ...(deps.config.protocols.ucpDisabledReason === undefined ? { ucp: ucpBinding(deps) } : {}),
    // ACP needs no https, only the namespace its payment handler is named in.
    ...(deps.config.protocols.namespace === undefined ? {} : { acp: acpBinding(deps) }),
  };
}
