// What every request answered before Koa gets, whichever path answers it (cached reads, src/http/fast-reads.ts;
// checkout session reads, src/http/session-reads.ts; checkout session creates, src/http/session-creates.ts; cached MCP
// tool calls, src/mcp/cached-calls.ts): the steps of the general chain written once, lean. A request id and its one
// log line (no pino child unless an error is logged), the security headers, the surface's own headers (CORS), the
// limit by address with its RateLimit-* headers, a failure (a 429, or whatever the answer throws) in the surface's
// error shape, and `Connection: close` once draining. Koa's context, koa-compose and a header write per `ctx.set` were
// most of a cached answer's cost (issue #15).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type Koa from 'koa';
import type { Logger } from '../log.js';
import { JSON_TYPE } from './caching.js';
import type { AppState } from './context.js';
import type { Lifecycle } from '../ports.js';
import { renderFailure } from './error-handler.js';
import type { Contract } from './openapi.js';
import type { ErrorShape, RenderedError } from './errors.js';
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
  lifecycle: Lifecycle;
}

/**
 * A body in parts, sent one after another as one body: an answer put together from parts kept apart (a cached MCP
 * result and the id of the call it answers) is never copied into one buffer to be sent.
 */
export type PayloadParts = ReadonlyArray<Buffer | string>;

/** What a lean path answers once the request is counted and within its limit. */
export interface LeanAnswer {
  status: number;
  /** Sent with its Content-Type and Content-Length (which stay on a HEAD, as RFC 9110 allows and Koa does). */
  body?: { payload: Buffer | string | PayloadParts; contentType: string };
}

/** A surface's own rendering of any failure (a protocol binding's), with every header it carries. */
export type FailureRenderer = (
  error: unknown,
  log: () => Logger,
) => { status: number; headers: Record<string, string>; body: string };

export interface LeanRequest {
  /** The path as Koa's `ctx.path` reads it, for the log line. */
  path: string;
  /** The documented shape of the surface's errors, or the surface's own rendering of them. */
  shape: ErrorShape | FailureRenderer;
  /** Headers the surface sends on every answer, failures included (CORS). */
  surfaceHeaders: ReadonlyArray<[name: string, value: string]>;
  /** When the request arrived (performance.now()), for the log line's duration. */
  started: number;
  /**
   * The answer, given the headers so far and the client's address (`ctx.ip`); it adds its own headers (Cache-Control,
   * ETag, API-Version). What it throws is answered in the surface's error shape, with the headers it added before
   * throwing.
   */
  answer: (headers: string[], ip: string) => LeanAnswer | Promise<LeanAnswer>;
}

/** A header parameter an operation declares, checked per request as the contract's dispatcher checks it. */
export interface HeaderParameter {
  /** Lower-cased, as Node keys `req.headers`. */
  name: string;
  required: boolean;
  validate: ValidateFunction;
}

interface ParameterObject {
  in: string;
  name: string;
  required?: boolean;
  schema?: object;
}

/** The operation's parameters as the contract declares them, each schema compiled with the contract's Ajv. */
export function operationParameters(
  contract: Contract,
  operationId: string,
  ajv: Ajv2020,
): Array<HeaderParameter & { in: string }> {
  const parameters = (contract.api.getOperation(operationId)?.parameters ?? []) as ParameterObject[];
  return parameters.map((parameter) => ({
    in: parameter.in,
    // Node keys `req.headers` lower-cased; other parameters keep their names.
    name: parameter.in === 'header' ? parameter.name.toLowerCase() : parameter.name,
    required: parameter.required ?? false,
    validate: ajv.compile(parameter.schema ?? {}),
  }));
}

/** Whether the contract accepts the request's headers (present when required, valid when present). */
export function admitsHeaders(req: IncomingMessage, headers: readonly HeaderParameter[]): boolean {
  for (const header of headers) {
    const value = req.headers[header.name];
    if (value === undefined ? header.required : !header.validate(value)) return false;
  }
  return true;
}

/** The value of a header among those collected so far (names at even places, values after them). */
function collected(headers: string[], name: string): string | undefined {
  for (let index = 0; index < headers.length; index += 2) if (headers[index] === name) return headers[index + 1];
  return undefined;
}

/** Sets a header among those collected so far, replacing one of the same name, as Koa's `ctx.set` does. */
export function setHeader(headers: string[], name: string, value: string): void {
  const lowerCased = name.toLowerCase();
  for (let index = 0; index < headers.length; index += 2) {
    if (headers[index]!.toLowerCase() === lowerCased) {
      headers[index + 1] = value;
      return;
    }
  }
  headers.push(name, value);
}

/**
 * A request header as one string (Node joins a repeated header with commas; only Set-Cookie, never a request's, comes
 * as a list); `name` lower-cased, as Node keys them.
 */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The payload's length in bytes, its parts' together. */
function byteLength(payload: Buffer | string | PayloadParts): number {
  if (typeof payload === 'string' || Buffer.isBuffer(payload)) return Buffer.byteLength(payload);
  let length = 0;
  for (const part of payload) length += Buffer.byteLength(part);
  return length;
}

/**
 * Sends the payload after the head writeHead staged: parts are written corked, so they leave in the one write the
 * final `end` uncorks, as a single payload does.
 */
function send(res: ServerResponse, payload: Buffer | string | PayloadParts | undefined): void {
  if (payload === undefined || typeof payload === 'string' || Buffer.isBuffer(payload)) return void res.end(payload);
  res.cork();
  for (let index = 0; index < payload.length - 1; index++) res.write(payload[index]);
  res.end(payload[payload.length - 1]);
}

/** A failure rendered in a documented shape, its body serialised. */
function inShape(rendered: RenderedError): ReturnType<FailureRenderer> {
  return { ...rendered, body: JSON.stringify(rendered.body) };
}

/** Answers a request with every step the general chain applies to it; `request.answer` says the rest. */
export function leanResponder({
  log,
  limiter,
  app,
  lifecycle,
}: LeanParts): (req: IncomingMessage, res: ServerResponse, request: LeanRequest) => void {
  /** Koa's own `ctx.ip` (TRUST_PROXY and X-Forwarded-For), from its request prototype without a whole context. */
  function clientAddress(req: IncomingMessage): string {
    const request = Object.create(app.request) as { app: Koa<AppState>; req: IncomingMessage; ip: string };
    request.app = app;
    request.req = req;
    return request.ip;
  }

  async function respond(req: IncomingMessage, res: ServerResponse, request: LeanRequest) {
    const requestId = requestIdOf(headerOf(req, 'x-request-id'));
    const headers = ['X-Request-Id', requestId, ...SECURITY_HEADER_LIST];
    for (const [name, value] of request.surfaceHeaders) headers.push(name, value);
    let answer: LeanAnswer;
    try {
      const ip = clientAddress(req);
      const counted = await limiter.count(addressKey(ip));
      for (const [name, value] of counted.headers) headers.push(name, value);
      if (counted.rejection) throw counted.rejection;
      const answered = request.answer(headers, ip);
      // A cached answer is at hand: awaiting it anyway would cost every cached read a turn of the microtask queue.
      answer = answered instanceof Promise ? await answered : answered;
    } catch (error) {
      const requestLog = () => log.child({ requestId });
      const { shape } = request;
      const rendered =
        typeof shape === 'function'
          ? shape(error, requestLog)
          : inShape(renderFailure(error, shape, requestLog, collected(headers, 'API-Version')));
      for (const [name, value] of Object.entries(rendered.headers)) setHeader(headers, name, value);
      answer = { status: rendered.status, body: { payload: rendered.body, contentType: JSON_TYPE } };
    }
    const { status, body } = answer;
    if (body) headers.push('Content-Type', body.contentType, 'Content-Length', String(byteLength(body.payload)));
    // Checked as the answer is sent, as the general chain's last step does: a drain may have begun while it was made.
    if (lifecycle.draining) setHeader(headers, 'Connection', 'close');
    logRequest(log, requestId, req.method!, request.path, status, request.started);
    res.writeHead(status, headers);
    // Node sends no body for HEAD.
    send(res, body?.payload);
  }

  return (req, res, request) => {
    respond(req, res, request).catch((error: unknown) => {
      log.error({ err: error }, 'request failed');
      res.destroy();
    });
  };
}
