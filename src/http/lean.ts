// What every request answered before Koa gets, whichever path answers it (cached reads, src/http/fast-reads.ts;
// cached MCP tool calls, src/mcp/cached-calls.ts): the steps of the general chain written once, lean. A request id
// and its one log line (no pino child unless an error is logged), the security headers, the surface's own headers
// (CORS), the limit by address with its RateLimit-* headers, and a failure (a 429) in the surface's error shape. Koa's
// context, koa-compose and a header write per `ctx.set` were most of a cached answer's cost (issue #15).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import type { Logger } from '../log.js';
import { JSON_TYPE } from './caching.js';
import type { AppState } from './context.js';
import { renderFailure } from './error-handler.js';
import type { ErrorShape } from './errors.js';
import { addressKey, type RateLimiter } from './rate-limit.js';
import { logRequest, requestIdOf } from './request-context.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** The security headers as writeHead takes them, flattened once rather than per answer. */
const SECURITY_HEADER_LIST = SECURITY_HEADERS.flat();

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface LeanParts {
  log: Logger;
  limiter: RateLimiter;
  /** The Koa application of the general chain, whose request prototype computes the client address. */
  app: Koa<AppState>;
}

/** What a lean path answers once the request is counted and within its limit. */
export interface LeanAnswer {
  status: number;
  /** Sent with its Content-Type and Content-Length (which stay on a HEAD, as RFC 9110 allows and Koa does). */
  body?: { payload: Buffer | string; contentType: string };
}

export interface LeanRequest {
  /** The path as Koa's `ctx.path` reads it, for the log line. */
  path: string;
  /** The shape of the surface's errors. */
  shape: ErrorShape;
  /** Headers the surface sends on every answer, failures included (CORS). */
  surfaceHeaders: ReadonlyArray<[name: string, value: string]>;
  /** When the request arrived (performance.now()), for the log line's duration. */
  started: number;
  /** The answer, given the headers so far; it adds its own (Cache-Control, ETag). */
  answer: (headers: string[]) => LeanAnswer;
}

/** Answers a request with every step the general chain applies to it; `request.answer` says the rest. */
export function leanResponder({
  log,
  limiter,
  app,
}: LeanParts): (req: IncomingMessage, res: ServerResponse, request: LeanRequest) => void {
  /** Koa's own `ctx.ip` (TRUST_PROXY and X-Forwarded-For), from its request prototype without a whole context. */
  function clientAddress(req: IncomingMessage): string {
    const request = Object.create(app.request) as { app: Koa<AppState>; req: IncomingMessage; ip: string };
    request.app = app;
    request.req = req;
    return request.ip;
  }

  async function respond(req: IncomingMessage, res: ServerResponse, request: LeanRequest) {
    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    const headers = ['X-Request-Id', requestId, ...SECURITY_HEADER_LIST];
    for (const [name, value] of request.surfaceHeaders) headers.push(name, value);
    let answer: LeanAnswer;
    try {
      const counted = await limiter.count(addressKey(clientAddress(req)));
      for (const [name, value] of counted.headers) headers.push(name, value);
      if (counted.rejection) throw counted.rejection;
      answer = request.answer(headers);
    } catch (error) {
      const rendered = renderFailure(error, request.shape, () => log.child({ requestId }));
      for (const [name, value] of Object.entries(rendered.headers)) headers.push(name, value);
      headers.push('Cache-Control', 'no-store');
      answer = { status: rendered.status, body: { payload: JSON.stringify(rendered.body), contentType: JSON_TYPE } };
    }
    const { status, body } = answer;
    if (body) headers.push('Content-Type', body.contentType, 'Content-Length', String(Buffer.byteLength(body.payload)));
    logRequest(log, requestId, req.method!, request.path, status, request.started);
    res.writeHead(status, headers);
    // Node sends no body for HEAD.
    res.end(body?.payload);
  }

  return (req, res, request) => {
    respond(req, res, request).catch((error: unknown) => {
      log.error({ err: error }, 'request failed');
      res.destroy();
    });
  };
}
