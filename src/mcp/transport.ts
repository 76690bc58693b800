// Streamable HTTP for the MCP servers, protocols 2026-07-28, 2025-11-25 and 2025-06-18, stateless: Origin, POST only (and CORS preflights from
// the allowed origins), MCP-Protocol-Version, no batches, a 100 kB body, a lenient Accept; then the server
// (src/mcp/rpc.ts) answers the one message with JSON, never a stream, and issues no session; a cached tool call is
// answered from the bytes its result is kept as.
import type { IncomingHttpHeaders } from 'node:http';
import cors from '@koa/cors';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Deps } from '../deps.js';
import { BODY_LIMIT_BYTES, BODY_SHAPE_LIMITS, exceedsDepth, parseJson, readBody, type BodyRead } from '../http/body.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { MethodNotAllowed, RateLimited } from '../domain/errors.js';
import { rateLimit } from '../http/protocol-io.js';
import type { WebDeps } from '../http/web-deps.js';
import {
  errorAnswer,
  type RpcError,
  INVALID_REQUEST,
  PARSE_ERROR,
  SUPPORTED_PROTOCOL_VERSIONS,
  unsupportedProtocolVersion,
  type Answer,
  type McpServer,
  type MirroredHeaders,
} from './rpc.js';

/** JSON-RPC's code for server-defined errors; MCP's SDKs use it for transport refusals. */
const TRANSPORT_ERROR = -32000;

/**
 * Every answer here is JSON, so any Accept that admits JSON (or none) is served: one of its comma-separated ranges,
 * parameters aside and trimmed (`\s` is what String.prototype.trim removes), is any of these, in any case. One test
 * of the header, not a split and a lower-cased copy of every range on each call.
 */
const ADMITS_JSON = /(?:^|,)\s*(?:\*\/\*|application\/\*|application\/json)\s*(?:;|,|$)/i;

/** Why the transport refuses a request: the status and JSON-RPC error it is answered with. */
interface Refusal {
  status: number;
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

/** Answers with a JSON-RPC error object and no id (none can be trusted before the body is understood). */
function reject(ctx: AppContext, { status, code, message, data }: Refusal): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code, message, ...(data && { data }) }, id: null };
}

/** DNS-rebinding guard: a browser page on another origin must not reach a server on localhost or an intranet. */
export function originAllowed(origin: string | undefined, allowed: string[]): boolean {
  if (!origin) return true; // not a browser: nothing to rebind
  try {
    return allowed.includes(new URL(origin).origin);
  } catch {
    return false; // includes the opaque origin "null"
  }
}

/** What a browser client sends besides the CORS-safelisted headers (no Mcp-Session-Id: none is ever issued). */
const ALLOWED_REQUEST_HEADERS = [
  'Content-Type',
  'Accept',
  'MCP-Protocol-Version',
  'Mcp-Method',
  'Mcp-Name',
  'Idempotency-Key',
  'X-Request-Id',
  'traceparent',
  'tracestate',
];
/** What a browser client may read of an answer: the limits, the wait after a 429, the trace id. */
const EXPOSED_HEADERS = ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id'];
/** The methods of an MCP endpoint: POST for messages, OPTIONS for preflights. */
const METHODS = ['POST', 'OPTIONS'];

/**
 * CORS for the origins of MCP_ALLOWED_ORIGINS: their preflights are answered (before the limiter, which must not count
 * them) and their answers readable, a 429 included. Any other origin gets no grant; admit() refuses it with a 403.
 */
export function mcpCors(allowed: string[]): AppMiddleware {
  const granted = cors({
    origin: (ctx) => (ctx.get('Origin') && originAllowed(ctx.get('Origin'), allowed) ? ctx.get('Origin') : ''),
    allowMethods: ['POST'],
    allowHeaders: ALLOWED_REQUEST_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    keepHeadersOnError: true,
  }) as unknown as AppMiddleware;
  // Without an Origin (an agent, not a browser) @koa/cors only adds Origin to Vary: done here, without its awaits.
  return (ctx, next) => {
    if (ctx.req.headers.origin !== undefined) return granted(ctx, next);
    ctx.state.headers.vary('Origin');
    return next();
  };
}

/** Why a POST's headers keep it from the server (its protocol version, then its Content-Type), if they do. */
function headerRefusal(headers: IncomingHttpHeaders): Refusal | undefined {
  // Any revision spoken here; another is 2026-07-28's UnsupportedProtocolVersionError, which a client of any revision
  // reads as a 400 and a 2026-07-28 client retries from (transports/streamable-http.mdx, "Protocol Version Header").
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) {
    const error = unsupportedProtocolVersion(version);
    return { status: error.status, code: error.code, message: error.message, data: error.options.data };
  }
  // Checked before the body is read, so the order of answers is fixed.
  if (!isJsonContentType(headers['content-type'] ?? ''))
    return { status: 415, code: TRANSPORT_ERROR, message: 'Content-Type must be application/json.' };
  return undefined;
}

/** The 406 of an Accept that admits no JSON: every answer here is JSON. */
function acceptRefusal(headers: IncomingHttpHeaders): Refusal | undefined {
  if (acceptsJson(headers.accept)) return undefined;
  return {
    status: 406,
    code: TRANSPORT_ERROR,
    message: 'Not Acceptable: every answer is application/json; send an Accept that admits it.',
  };
}

/** No Accept, or one that admits JSON (`application/json, text/event-stream` as MCP clients send, or any type). */
function acceptsJson(accept: string | undefined): boolean {
  return !accept || ADMITS_JSON.test(accept);
}

/** Checks the request line and headers; answers and returns false when the request must not reach the server. */
export function admit(ctx: AppContext, deps: Deps): boolean {
  // First, whatever the method: a preflight from an origin mcpCors did not grant is refused here too.
  if (!originAllowed(ctx.get('Origin'), deps.config.mcpAllowedOrigins)) {
    reject(ctx, {
      status: 403,
      code: TRANSPORT_ERROR,
      message: `Origin ${ctx.get('Origin')} is not allowed; set MCP_ALLOWED_ORIGINS to allow it.`,
    });
    return false;
  }
  if (ctx.method === 'OPTIONS') {
    // Not a preflight (mcpCors answers those): what the endpoint supports.
    ctx.set('Allow', METHODS.join(', '));
    ctx.status = 204;
    return false;
  }
  if (ctx.method !== 'POST') {
    // No server-initiated stream (GET) and no sessions to end (DELETE): messages come by POST only.
    throw new MethodNotAllowed(ctx.method, ctx.path, METHODS);
  }
  const refusal = headerRefusal(ctx.req.headers);
  if (refusal) reject(ctx, refusal);
  return !refusal;
}

/** The one JSON-RPC message object a body holds, or why it cannot be served. */
function parseMessage(body: BodyRead): { ok: true; message: object } | { ok: false; refusal: Refusal } {
  const refused = (status: number, code: number, message: string) => ({
    ok: false as const,
    refusal: { status, code, message },
  });
  if (body.outcome === 'too_large')
    return refused(413, TRANSPORT_ERROR, `The request body is larger than the ${BODY_LIMIT_BYTES / 1024} kB limit.`);
  if (body.outcome === 'aborted') return refused(400, PARSE_ERROR, 'Parse error: the body could not be read.');
  const parsed = parseJson(body.text);
  if (!parsed.ok) return refused(400, PARSE_ERROR, 'Parse error: the body is not valid JSON.');
  if (Array.isArray(parsed.value))
    return refused(
      400,
      INVALID_REQUEST,
      `JSON-RPC batches are not supported (protocols ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}); send one message per request.`,
    );
  if (typeof parsed.value !== 'object' || parsed.value === null || exceedsDepth(parsed.value))
    return refused(
      400,
      INVALID_REQUEST,
      `Invalid request: send one JSON-RPC 2.0 message object, ${BODY_SHAPE_LIMITS}.`,
    );
  return { ok: true, message: parsed.value };
}

/** Reads and checks the JSON-RPC message; answers and returns undefined when it cannot be served. */
export async function readMessage(ctx: AppContext): Promise<object | undefined> {
  const body = await readBody(ctx.req, BODY_LIMIT_BYTES);
  const parsed = parseMessage(body);
  if (parsed.ok) return parsed.message;
  if (body.outcome === 'too_large') ctx.set('Connection', 'close'); // the rest of the body is never read
  reject(ctx, parsed.refusal);
  return undefined;
}

/** Sends the server's answer to the one message: JSON with its status and headers, or 202 and nothing. */
export function sendAnswer(ctx: AppContext, answer: Answer): void {
  if (answer.kind === 'accepted') {
    ctx.body = null; // a notification, or a response to nothing we asked: nothing to answer
    ctx.status = 202;
    return;
  }
  for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
  ctx.status = answer.status;
  ctx.type = 'application/json';
  ctx.body = answer.json;
}

/** What a request's headers mirror of its body (2026-07-28): the server checks them against it. */
export function mirroredHeaders(headers: IncomingHttpHeaders): MirroredHeaders {
  const one = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  return { protocolVersion: one('mcp-protocol-version'), method: one('mcp-method'), name: one('mcp-name') };
}

/**
 * The rate limit as a transport step of an endpoint that counts its own requests (the protocol bindings' MCP endpoints,
 * so that a 429 there is a JSON-RPC error): counts the request against its address and, over the limit, answers the
 * binding's `refusal` with no id (nothing was read) and says the request was not admitted.
 */
export async function admittedByRateLimit(
  ctx: AppContext,
  deps: Pick<WebDeps, 'rateLimiter'>,
  refusal: (error: RateLimited) => RpcError,
): Promise<boolean> {
  try {
    await rateLimit(ctx, deps);
    return true;
  } catch (error) {
    if (!(error instanceof RateLimited)) throw error;
    sendAnswer(ctx, errorAnswer(null, refusal(error)));
    return false;
  }
}

/** Serves one HTTP request on an MCP endpoint: the transport's checks, then the server's answer as JSON. */
export async function serveMcp(ctx: AppContext, deps: Deps, server: McpServer): Promise<void> {
  if (!admit(ctx, deps)) return;
  const refusal = acceptRefusal(ctx.req.headers);
  if (refusal) return reject(ctx, refusal);
  const message = await readMessage(ctx);
  if (!message) return;
  // A cached tool's result is sent as the bytes kept, without running the tool or serialising it again.
  const headers = mirroredHeaders(ctx.req.headers);
  const cached = server.cachedAnswer?.(message, headers);
  if (cached) {
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = Buffer.concat(cached.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
    return;
  }
  const answer = await server.answer(message, () => ctx.state.log, headers);
  if (answer.kind !== 'invalid') ctx.set('Cache-Control', 'no-store');
  sendAnswer(ctx, answer);
}
