// Cached catalogue tool calls answered before Koa. A POST to an MCP endpoint whose headers the transport admits and
// whose one JSON-RPC message is a tools/call of a cached tool (src/mcp/tools.ts), with arguments the tool's schema
// accepts and whose result the read cache holds, is answered here: the transport's checks are the same functions
// (src/mcp/transport.ts), the message is classified and the arguments validated by the same server (src/mcp/rpc.ts,
// the contract's JSON Schemas on the shared Ajv), and the general chain's other steps are written once, lean, for this
// path and cached reads alike (src/http/lean.ts). The result is kept as UTF-8 JSON, so a hit sends bytes: kept as a
// string (concatenated with the id, then flattened, measured and encoded on every answer) it cost a cached call 2.3
// times the REST read's time in writev, and Buffer.byteLength besides. The bytes go out as they are stored, between
// the id's part and the closing brace, not joined with them into a copy.
// A request this path cannot answer exactly as the general chain would goes to it untouched but for its body, which
// the general chain then takes from the same read (readMcpBody): while draining, on a retiring endpoint, a refused
// Origin or header, a streamed body, anything but a cache hit. test/mcp-cached-calls.test.ts diffs both paths on the same requests.
import type { WebDeps as Deps } from '../http/web-deps.js';
import { deprecationsFor } from '../domain/versioning.js';
import { JSON_TYPE } from '../http/caching.js';
import { leanResponder, type LeanParts, type RequestListener } from '../http/lean.js';
import { surfaceOf } from '../http/surfaces.js';
import type { McpServer } from './rpc.js';
import { admitsPostHeaders, mcpCorsResponseHeaders, parseMessage, readMcpBody } from './transport.js';

export interface CachedCallParts extends LeanParts {
  deps: Pick<Deps, 'lifecycle' | 'deprecations'> & { config: Pick<Deps['config'], 'mcpAllowedOrigins'> };
  /** The MCP servers by path; those with cached tools are answered here. */
  servers: Record<string, McpServer>;
}

/** Answers cached tool calls before Koa; passes every other request to `general`, and so does any call not a hit. */
export function cachedToolCallsFirst(parts: CachedCallParts, general: RequestListener): RequestListener {
  const { lifecycle, deprecations, config } = parts.deps;
  const respond = leanResponder(parts);
  const servers = new Map(Object.entries(parts.servers).filter(([, server]) => server.cachedAnswer));
  for (const path of servers.keys()) {
    // The mcp surface's steps are the ones written here; on any other surface the answer would differ.
    if (surfaceOf('POST', path) !== 'mcp')
      throw new Error(`${path} is served from the read cache but not on the mcp surface`);
  }

  async function serve(
    req: Parameters<RequestListener>[0],
    res: Parameters<RequestListener>[1],
    path: string,
    server: McpServer,
  ) {
    const started = performance.now();
    const parsed = parseMessage(await readMcpBody(req));
    const parts = parsed.ok ? server.cachedAnswer!(parsed.message) : undefined;
    if (parts === undefined) return general(req, res);
    respond(req, res, {
      path,
      shape: 'mcp',
      surfaceHeaders: mcpCorsResponseHeaders(req.headers.origin),
      started,
      answer: (headers) => {
        headers.push('Cache-Control', 'no-store');
        return { status: 200, body: { payload: parts, contentType: JSON_TYPE } };
      },
    });
  }

  return (req, res) => {
    const path = req.url ?? '';
    const server = req.method === 'POST' && !lifecycle.draining ? servers.get(path) : undefined;
    if (
      !server ||
      // A streamed body could be found too large midway, and reading stops there: the general chain reads it itself.
      req.headers['content-length'] === undefined ||
      !admitsPostHeaders(req.headers, config.mcpAllowedOrigins) ||
      (deprecations.length > 0 && deprecationsFor('POST', path, deprecations).length > 0)
    )
      return general(req, res);
    serve(req, res, path, server).catch((error: unknown) => {
      parts.log.error({ err: error }, 'request failed');
      res.destroy();
    });
  };
}
