// The two MCP servers, at /catalog/mcp and /checkout/mcp (routed by src/http/routes.ts).
import type { WebDeps as Deps } from '../http/web-deps.js';
import { createCatalogServer } from './catalog-server.js';
import { createCheckoutServer } from './checkout-server.js';
import type { McpServer } from './rpc.js';
import { contractSchemas } from './schemas.js';
import type { Document } from 'openapi-backend';

/** The contract documents these operations; the MCP servers answer them, not a contract handler. */
export type McpOperationId = 'callCatalogMcp' | 'callCheckoutMcp' | 'preflightCatalogMcp' | 'preflightCheckoutMcp';

/** The servers by path, built once per process: they hold their tools' compiled schemas and no request's data. */
export function createMcpServers(deps: Deps, document: Document): Record<string, McpServer> {
  const contract = contractSchemas(document);
  return {
    '/catalog/mcp': createCatalogServer(deps, contract),
    '/checkout/mcp': createCheckoutServer(deps, contract),
  };
}
