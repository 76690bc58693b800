// The Koa application: what every request gets (a request id and log line, security headers, `no-store` unless a
// step says otherwise), then the pipeline of its surface (src/http/surfaces.ts). In front of it, cached reads, checkout
// session reads, session creates (checkout, UCP, ACP), and cached MCP tool calls are answered without Koa, with the same steps
// (src/http/fast-reads.ts, src/http/session-reads.ts, src/http/session-creates.ts, src/mcp/cached-calls.ts).
import Koa from 'koa';
import { noStoreByDefault, type CacheableOperation } from './caching.js';
import type { AppState } from './context.js';
import { closeConnectionsWhileDraining } from './draining.js';
import { cachedToolCallsFirst } from '../mcp/cached-calls.js';
import type { McpServer } from '../mcp/rpc.js';
import { cachedReadsFirst } from './fast-reads.js';
import type { RequestListener } from './lean.js';
import type { ReadKeys } from '../ports.js';
import { requestContext } from './request-context.js';
import { securityHeaders } from './security-headers.js';
import { sessionCreatesFirst } from './session-creates.js';
import { sessionReadsFirst } from './session-reads.js';
import { routeToSurfaces, type SurfaceParts } from './surfaces.js';

function createApp(parts: SurfaceParts): Koa<AppState> {
  const { deps } = parts;
  // Behind N trusted proxies the client address is the Nth X-Forwarded-For entry from the right: entries further left
  // were written by the client and prove nothing.
  const hops = deps.config.trustedProxyHops;
  const app = new Koa<AppState>({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are logged once, by each surface's error step
  app.use(closeConnectionsWhileDraining(deps.lifecycle));
  app.use(requestContext(deps.log));
  app.use(securityHeaders());
  app.use(noStoreByDefault());
  app.use(routeToSurfaces(parts));
  return app;
}

/**
 * The HTTP server's request listener: cached reads, checkout session reads, session creates, and cached MCP tool calls
 * first, everything else (and every request those could not answer) through Koa.
 */
export function createRequestListener(
  parts: SurfaceParts,
  reads: { cacheable: CacheableOperation[]; keys: ReadKeys },
  mcpServers: Record<string, McpServer>,
): RequestListener {
  const app = createApp(parts);
  const { deps, limiter, contract } = parts;
  const lean = { log: deps.log, limiter, app, lifecycle: deps.lifecycle };
  const general = cachedToolCallsFirst({ ...lean, deps, servers: mcpServers }, app.callback());
  const creates = sessionCreatesFirst({ ...lean, deps, contract, protocols: parts.protocols }, general);
  const sessions = sessionReadsFirst({ ...lean, deps, contract }, creates);
  return cachedReadsFirst({ ...lean, deps, contract, ...reads }, sessions);
}
