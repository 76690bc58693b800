// The two MCP servers' routes, /catalog/mcp and /checkout/mcp, answered before the contract dispatcher.
import type { WebDeps as Deps } from '../http/web-deps.js';
import type { AppMiddleware } from '../http/context.js';
import { createCatalogServer } from './catalog-server.js';
import { createCheckoutServer } from './checkout-server.js';
import type { McpServer } from './rpc.js';
import { serveMcp } from './transport.js';

/** The contract documents these operations, but they are served here, never by the contract dispatcher. */
export type McpOperationId = 'callCatalogMcp' | 'callCheckoutMcp' | 'preflightCatalogMcp' | 'preflightCheckoutMcp';

/** The servers by path, built once per process: they hold their tools' compiled schemas and no request's data. */
export function createMcpServers(deps: Deps): Record<string, McpServer> {
  return {
    '/catalog/mcp': createCatalogServer(deps),
    '/checkout/mcp': createCheckoutServer(deps),
  };
}

export function mcpRoutes(deps: Deps, servers: Record<string, McpServer>): AppMiddleware {
  return async (ctx, next) => {
    const server = servers[ctx.path];
    if (!server) return next();
    await serveMcp(ctx, deps, server);
  };
}
