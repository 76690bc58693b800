// Streamable HTTP for the MCP servers, protocol 2025-06-18, stateless: Origin, POST only (and CORS preflights from
// the allowed origins), MCP-Protocol-Version, no batches, a 100 kB body, a lenient Accept; then the server
// (src/mcp/rpc.ts) answers the one message with JSON, never a stream, and issues no session.
import type { IncomingMessage } from 'node:http';
import cors from '@koa/cors';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Deps } from '../deps.js';
import { exceedsDepth } from '../http/body.js';
import type { AppContext, AppMiddleware } from '../http/context.js';
import { MethodNotAllowed } from '../domain/errors.js';
import { INVALID_REQUEST, NEGOTIATED_PROTOCOL_VERSION, PARSE_ERROR, type McpServer } from './rpc.js';

/**
 * What a client may have negotiated: this revision only. The older ones require what these servers do not offer
 * (2025-03-26 requires JSON-RPC batches), so an initialize asking for one is answered with ours and the client decides
 * whether it can speak it.
 */
export const ACCEPTED_PROTOCOL_VERSIONS = [NEGOTIATED_PROTOCOL_VERSION];

/** Largest request body, in bytes; the same 100 kB as the REST API's JSON bodies. */
export const MCP_BODY_LIMIT = 100 * 1024;

/** JSON-RPC's code for server-defined errors; MCP's SDKs use it for transport refusals. */
const TRANSPORT_ERROR = -32000;

/** Every answer here is JSON, so any Accept that admits JSON (or none) is served. */
const JSON_MEDIA_RANGES = new Set(['*/*', 'application/*', 'application/json']);

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

/** What a browser client sends besides the CORS-safelisted headers (no Mcp-Session-Id: none is ever issued). */
const ALLOWED_REQUEST_HEADERS = ['Content-Type', 'Accept', 'MCP-Protocol-Version', 'Idempotency-Key', 'X-Request-Id'];
/** What a browser client may read of an answer: the limits, the wait after a 429, the trace id. */
const EXPOSED_HEADERS = ['Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id'];
/** The methods of an MCP endpoint: POST for messages, OPTIONS for preflights. */
const METHODS = ['POST', 'OPTIONS'];

/**
 * CORS for the origins of MCP_ALLOWED_ORIGINS: their preflights are answered (before the limiter, which must not count
 * them) and their answers readable, a 429 included. Any other origin gets no grant; admit() refuses it with a 403.
 */
export function mcpCors(allowed: string[]): AppMiddleware {
  return cors({
    origin: (ctx) => (ctx.get('Origin') && originAllowed(ctx as AppContext, allowed) ? ctx.get('Origin') : ''),
    allowMethods: ['POST'],
    allowHeaders: ALLOWED_REQUEST_HEADERS,
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    keepHeadersOnError: true,
  }) as unknown as AppMiddleware;
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

/** No Accept, or one that admits JSON (`application/json, text/event-stream` as MCP clients send, or any type). */
function acceptsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  if (!accept) return true;
  return accept.split(',').some((range) => JSON_MEDIA_RANGES.has(range.split(';')[0]!.trim().toLowerCase()));
}

/** Checks the request line and headers; answers and returns false when the request must not reach the server. */
export function admit(ctx: AppContext, deps: Deps): boolean {
  // First, whatever the method: a preflight from an origin mcpCors did not grant is refused here too.
  if (!originAllowed(ctx, deps.config.mcpAllowedOrigins)) {
    reject(
      ctx,
      403,
      TRANSPORT_ERROR,
      `Origin ${ctx.get('Origin')} is not allowed; set MCP_ALLOWED_ORIGINS to allow it.`,
    );
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
  if (!protocolVersionAccepted(ctx)) {
    reject(
      ctx,
      400,
      TRANSPORT_ERROR,
      `Unsupported MCP-Protocol-Version ${ctx.get('MCP-Protocol-Version')}; supported: ${ACCEPTED_PROTOCOL_VERSIONS.join(', ')}.`,
    );
    return false;
  }
  // Checked before the body is read, so the order of answers is fixed.
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

/** Serves one HTTP request on an MCP endpoint: the transport's checks, then the server's answer as JSON. */
export async function serveMcp(ctx: AppContext, deps: Deps, server: McpServer): Promise<void> {
  if (!admit(ctx, deps)) return;
  if (!acceptsJson(ctx.req)) {
    reject(
      ctx,
      406,
      TRANSPORT_ERROR,
      'Not Acceptable: every answer is application/json; send an Accept that admits it.',
    );
    return;
  }
  const message = await readMessage(ctx);
  if (!message) return;
  const answer = await server.answer(message, ctx.state.log);
  if (answer.kind === 'invalid') {
    reject(ctx, 400, PARSE_ERROR, 'Parse error: the body is not a JSON-RPC 2.0 message.');
    return;
  }
  ctx.set('Cache-Control', 'no-store');
  if (answer.kind === 'accepted') {
    ctx.body = null; // a notification, or a response to nothing we asked: nothing to answer
    ctx.status = 202;
    return;
  }
  ctx.status = 200;
  ctx.type = 'application/json';
  ctx.body = answer.json;
}
