// Streamable HTTP for the MCP servers, protocol 2025-06-18, stateless: the transport rules the SDK leaves to us
// (POST only, Origin, MCP-Protocol-Version, no batches, a 100 kB body, version negotiation, a lenient Accept), then a
// fresh McpServer and transport for this one request. Reusing either across requests leaks data between clients.
import type { IncomingMessage } from 'node:http';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Deps } from '../deps.js';
import { exceedsDepth } from '../http/body.js';
import type { AppContext } from '../http/context.js';
import { MethodNotAllowed } from '../domain/errors.js';

/** The revision these servers implement; initialize requests for any version we do not speak are answered with it. */
export const NEGOTIATED_PROTOCOL_VERSION = '2025-06-18';

/**
 * What a client may have negotiated: this revision only. The older ones the SDK speaks require what these servers do
 * not offer (2025-03-26 requires JSON-RPC batches), so an initialize asking for one is answered with ours and the
 * client decides whether it can speak it.
 */
export const ACCEPTED_PROTOCOL_VERSIONS = [NEGOTIATED_PROTOCOL_VERSION];

/** Largest request body, in bytes; the same 100 kB as the REST API's JSON bodies. */
export const MCP_BODY_LIMIT = 100 * 1024;

// JSON-RPC 2.0 error codes: -32700 parse error, -32600 invalid request; -32000 is the SDK's code for transport refusals.
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const TRANSPORT_ERROR = -32000;

/** The SDK answers 406 unless Accept lists both media types; since every answer here is JSON, one that admits JSON is enough. */
const SDK_ACCEPT = 'application/json, text/event-stream';
const JSON_MEDIA_RANGES = new Set(['*/*', 'application/*', 'application/json']);

export type McpServerFactory = (deps: Deps) => McpServer;

/** Answers with a JSON-RPC error object and no id (none can be trusted before the body is understood). */
function reject(ctx: AppContext, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** DNS-rebinding guard: a browser page on another origin must not reach a server on localhost or an intranet. */
function originAllowed(ctx: AppContext, allowed: string[]): boolean {
  const origin = ctx.get('Origin');
  if (!origin) return true; // not a browser: nothing to rebind
  try {
    return allowed.includes(new URL(origin).origin);
  } catch {
    return false; // includes the opaque origin "null"
  }
}

function protocolVersionAccepted(ctx: AppContext): boolean {
  const version = ctx.get('MCP-Protocol-Version');
  return !version || ACCEPTED_PROTOCOL_VERSIONS.includes(version);
}

export type BodyRead = { outcome: 'too_large' } | { outcome: 'aborted' } | { outcome: 'read'; text: string };

/** Reads the raw body up to `limit` bytes; stops reading as soon as it is known to be larger. */
export async function readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  if (Number(req.headers['content-length']) > limit) return { outcome: 'too_large' };
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) return { outcome: 'too_large' };
      chunks.push(chunk);
    }
  } catch {
    return { outcome: 'aborted' }; // the client went away mid-body: its mistake, not a server error
  }
  return { outcome: 'read', text: Buffer.concat(chunks).toString('utf8') };
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** An initialize asking for a revision we do not speak (newer, or unknown) is answered with ours, as the spec allows. */
function negotiateProtocolVersion(message: unknown): void {
  if (typeof message !== 'object' || message === null) return;
  const { method, params } = message as { method?: unknown; params?: { protocolVersion?: unknown } };
  if (method !== 'initialize' || typeof params !== 'object' || params === null) return;
  if (!ACCEPTED_PROTOCOL_VERSIONS.includes(params.protocolVersion as string))
    params.protocolVersion = NEGOTIATED_PROTOCOL_VERSION;
}

/** Clients that send no Accept, or one that admits JSON, are served; the SDK insists on a literal list. */
function normaliseAccept(req: IncomingMessage): void {
  const accept = req.headers.accept;
  const ranges = (accept ?? '').split(',').map((range) => range.split(';')[0]!.trim().toLowerCase());
  if (!accept || ranges.some((range) => JSON_MEDIA_RANGES.has(range))) req.headers.accept = SDK_ACCEPT;
}

/** Checks the request line and headers; answers and returns false when the request must not reach the server. */
export function admit(ctx: AppContext, deps: Deps): boolean {
  if (ctx.method !== 'POST') {
    // No server-initiated stream (GET) and no sessions to end (DELETE): this transport is POST only.
    throw new MethodNotAllowed(ctx.method, ctx.path, ['POST']);
  }
  if (!originAllowed(ctx, deps.config.mcpAllowedOrigins)) {
    reject(
      ctx,
      403,
      TRANSPORT_ERROR,
      `Origin ${ctx.get('Origin')} is not allowed; set MCP_ALLOWED_ORIGINS to allow it.`,
    );
    return false;
  }
  if (!protocolVersionAccepted(ctx)) {
    reject(
      ctx,
      400,
      TRANSPORT_ERROR,
      `Unsupported MCP-Protocol-Version ${ctx.get('MCP-Protocol-Version')}; supported: ${ACCEPTED_PROTOCOL_VERSIONS.join(', ')}.`,
    );
    return false;
  }
  // Checked before the body is read (the SDK checks it too, but only after our parse), so the order of answers is fixed.
  if (!isJsonContentType(ctx.get('Content-Type'))) {
    reject(ctx, 415, TRANSPORT_ERROR, 'Content-Type must be application/json.');
    return false;
  }
  return true;
}

/** Reads and checks the JSON-RPC message; answers and returns undefined when it cannot be served. */
export async function readMessage(ctx: AppContext): Promise<object | undefined> {
  const body = await readBody(ctx.req, MCP_BODY_LIMIT);
  if (body.outcome === 'too_large') {
    ctx.set('Connection', 'close'); // the rest of the body is never read
    reject(ctx, 413, TRANSPORT_ERROR, `The request body is larger than the ${MCP_BODY_LIMIT / 1024} kB limit.`);
    return undefined;
  }
  if (body.outcome === 'aborted') {
    reject(ctx, 400, PARSE_ERROR, 'Parse error: the body could not be read.');
    return undefined;
  }
  const parsed = parseJson(body.text);
  if (!parsed.ok) {
    reject(ctx, 400, PARSE_ERROR, 'Parse error: the body is not valid JSON.');
    return undefined;
  }
  if (Array.isArray(parsed.value)) {
    reject(
      ctx,
      400,
      INVALID_REQUEST,
      `JSON-RPC batches are not supported in protocol ${NEGOTIATED_PROTOCOL_VERSION}; send one message per request.`,
    );
    return undefined;
  }
  if (typeof parsed.value !== 'object' || parsed.value === null || exceedsDepth(parsed.value)) {
    reject(
      ctx,
      400,
      INVALID_REQUEST,
      'Invalid request: send one JSON-RPC 2.0 message object, nested at most 32 levels deep.',
    );
    return undefined;
  }
  return parsed.value;
}

/** Hands one admitted message to a fresh server and transport, which answer on the raw response. */
async function dispatch(ctx: AppContext, deps: Deps, createServer: McpServerFactory, message: object): Promise<void> {
  const server = createServer(deps);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  transport.onerror = (error) => ctx.state.log.info({ err: error.message }, 'MCP request refused by the transport');
  ctx.res.on('close', () => {
    // Once the response is done, nothing may outlive the request; a failing close must not become an unhandled rejection.
    Promise.all([transport.close(), server.close()]).catch((error: unknown) =>
      ctx.state.log.warn({ err: error }, 'closing an MCP server failed'),
    );
  });
  await server.connect(transport);
  ctx.respond = false; // the transport writes the response; the headers set so far (rate limit, request id) go with it
  await transport.handleRequest(ctx.req, ctx.res, message);
}

/** Serves one HTTP request on an MCP endpoint. */
export async function serveMcp(ctx: AppContext, deps: Deps, createServer: McpServerFactory): Promise<void> {
  if (!admit(ctx, deps)) return;
  const message = await readMessage(ctx);
  if (!message) return;
  negotiateProtocolVersion(message);
  normaliseAccept(ctx.req);
  await dispatch(ctx, deps, createServer, message);
}
