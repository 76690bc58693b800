// Every operationId of the contract maps to exactly one handler; a missing one is a type error.
import type { WebDeps } from '../http/web-deps.js';
import type { OperationHandlers } from '../http/openapi.js';
import { adminCatalogHandlers } from './admin/catalog.js';
import { adminOrderHandlers } from './admin/orders.js';
import { adminPromotionHandlers } from './admin/promotions.js';
import { agentCartHandlers } from './agent/carts.js';
import { agentCatalogHandlers } from './agent/index.js';
import { agentOrderHandlers } from './agent/orders.js';
import { catalogHandlers } from './catalog/index.js';
import { checkoutHandlers } from './checkout/index.js';
import { oauthHandlers } from './oauth/index.js';
import { operationsHandlers } from './operations/index.js';
import { protocolResourceHandlers } from './protocols/resources.js';
import { paymentHandlers } from './payments/index.js';
import { versioningHandlers } from './versioning/index.js';

export function createHandlers(deps: WebDeps): OperationHandlers {
  return {
    ...catalogHandlers(deps),
    ...operationsHandlers(deps),
    ...checkoutHandlers(deps),
    ...paymentHandlers(deps),
    ...versioningHandlers(deps),
    ...oauthHandlers(deps),
    ...agentCatalogHandlers(deps),
    ...agentCartHandlers(deps),
    ...protocolResourceHandlers(deps),
    ...agentOrderHandlers(deps),
    ...adminOrderHandlers(deps),
    ...adminCatalogHandlers(deps),
    ...adminPromotionHandlers(deps),
  };
}
