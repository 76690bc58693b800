// The two MCP servers' routes: POST /catalog/mcp and POST /checkout/mcp, answered before the contract dispatcher.
import type { Deps } from '../deps.js';
import type { AppMiddleware } from '../http/context.js';
import { createCatalogServer } from './catalog-server.js';
import { createCheckoutServer } from './checkout-server.js';
import { serveMcp, type McpServerFactory } from './transport.js';

const SERVERS: Record<string, McpServerFactory> = {
  '/catalog/mcp': createCatalogServer,
  '/checkout/mcp': createCheckoutServer,
};

/** The contract documents these operations, but they are served here, never by the contract dispatcher. */
export type McpOperationId = 'callCatalogMcp' | 'callCheckoutMcp';

export function mcpRoutes(deps: Deps): AppMiddleware {
  return async (ctx, next) => {
    const createServer = SERVERS[ctx.path];
    if (!createServer) return next();
    await serveMcp(ctx, deps, createServer);
  };
}
