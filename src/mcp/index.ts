// The MCP servers' routes (issue #5 fills this in).
import type { Deps } from '../deps.js';
import type { AppMiddleware } from '../http/context.js';

export const MCP_PATHS = ['/catalog/mcp', '/checkout/mcp'];

export function isMcpPath(path: string): boolean {
  return MCP_PATHS.includes(path);
}

export function mcpRoutes(_deps: Deps): AppMiddleware {
  return (_ctx, next) => next();
}
