// What the ACP and UCP bindings share on the wire: their routes (served by the one router, src/http/routes.ts, each
// protocol ordering its own checks after the shared steps), reading JSON bodies, and sending an answer as exact bytes.
// A binding's checks read the request and set headers through a ProtocolExchange (Koa's context is one).
import type { IncomingMessage } from 'node:http';
import type { Deps } from '../deps.js';
import type { WebDeps } from './web-deps.js';
import { BODY_LIMIT_BYTES, BODY_SHAPE_LIMITS, exceedsDepth, parseJson, readBody } from './body.js';
import type { AppContext } from './context.js';
import { addressKey } from './rate-limit.js';
import type { Logger } from '../log.js';
import { ProtocolError } from './protocol-errors.js';
import type { Db } from '../db/knex.js';
import type { ProtocolResponse } from '../protocols/answers.js';
import { claimFirst, protocolKeys, type IdempotentRequest, type KeyOutcome } from '../services/idempotency/index.js';
import {
  createProtocolSession,
  createProtocolSessionUnderGrant,
  type CreatePlan,
  type ProtocolCreate,
} from '../services/checkout/create.js';

// The bindings' errors and their renderers live in src/http/protocol-errors.ts; these names stay importable from here.
export { jsonResponse, notStored, ProtocolError, protocolErrorOf } from './protocol-errors.js';

/** What a binding's steps use of a request, and how they set its answer's headers. */
export interface ProtocolExchange {
  readonly method: string;
  /** The path without its query, as Koa's `ctx.path`. */
  readonly path: string;
  readonly req: IncomingMessage;
  /** The client's address (Koa's `ctx.ip`: TRUST_PROXY applied). */
  readonly ip: string;
  /** A request header's value, '' when absent (Koa's `ctx.get`). */
  get(name: string): string;
  /** Sets a header of the answer, replacing one of the same name (Koa's `ctx.set`). */
  set(name: string, value: string): void;
}

/** A binding's answer to a request, and headers of its own to send with it (Idempotent-Replayed). */
export interface ProtocolAnswer {
  response: ProtocolResponse;
  headers?: Record<string, string>;
}

/** The operation a route of a binding answers, given the path's parameters (decoded). */
export type BindingAnswer = (ctx: AppContext, params: { id?: string }) => Promise<void>;

/** One path of a binding, with what each of its methods does (GET answers HEAD too); any other method is its 405. */
export interface BindingRoute {
  /** The path template, e.g. `/ucp/checkout-sessions/{id}`. */
  path: string;
  methods: Partial<Record<'GET' | 'POST' | 'PUT', BindingAnswer>> | { any: BindingAnswer };
  /**
   * Whether the shared limiter counts requests to it before the binding's steps (the default); the UCP MCP endpoint
   * counts its own, so that its 429 is a JSON-RPC error.
   */
  counted?: boolean;
}

/** One protocol binding, as the one router serves it (src/http/routes.ts). */
export interface ProtocolBinding {
  /** Paths (find-my-way syntax) wholly the binding's: a request there that no route serves is its 404 or 405. */
  paths: string[];
  routes: BindingRoute[];
  /** Headers the binding sets on every answer before any check (ACP: its version, the caller's Request-Id). */
  opening(exchange: Pick<ProtocolExchange, 'get'>): Array<[name: string, value: string]>;
  /** Any failure, in the binding's error shape and `no-store`; `log` gives the request's logger for a 500. */
  failure(error: unknown, log: () => Logger): ProtocolResponse;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** `application/json`, with or without parameters. */
export function isJsonMediaType(contentType: string): boolean {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase() === 'application/json';
}

/** A JSON body, with the exact bytes it was read from (`raw`: UCP 2026-08-25's idempotency fingerprint). */
export type JsonBody = { kind: 'absent'; raw?: Buffer } | { kind: 'json'; value: unknown; raw: Buffer };

/** Reads a JSON body (100 kB, 32 levels, 4,096 objects and arrays); the errors are ApiErrors the binding renders in its own shape. */
export async function readJsonBody(
  ctx: ProtocolExchange,
  codes: { invalidJson: string; mediaType: string },
): Promise<JsonBody> {
  const declaredLength = Number(ctx.get('Content-Length') || 0);
  const hasBody = declaredLength > 0 || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody) return { kind: 'absent' };
  if (!isJsonMediaType(ctx.get('Content-Type')))
    throw new ProtocolError(415, codes.mediaType, 'Send the body as application/json.', { param: 'Content-Type' });
  const read = await readBody(ctx.req, BODY_LIMIT_BYTES);
  if (read.outcome === 'too_large') {
    ctx.set('Connection', 'close'); // the rest of the body is never read
    throw new ProtocolError(
      413,
      'payload_too_large',
      `The request body is larger than the ${BODY_LIMIT_BYTES / 1024} kB limit.`,
      { param: '$' },
    );
  }
  if (read.outcome === 'aborted')
    throw new ProtocolError(400, codes.invalidJson, 'The body could not be read.', { param: '$' });
  if (read.text.trim() === '') return { kind: 'absent', raw: read.bytes };
  const parsed = parseJson(read.text);
  if (!parsed.ok) throw new ProtocolError(400, codes.invalidJson, 'The body is not valid JSON.', { param: '$' });
  if (exceedsDepth(parsed.value))
    throw new ProtocolError(400, codes.invalidJson, `The body must be JSON ${BODY_SHAPE_LIMITS}.`, { param: '$' });
  return { kind: 'json', value: parsed.value, raw: read.bytes };
}

/** Sets an answer's headers, the response's then the binding's own, as `sendProtocolResponse` sends them. */
function setAnswerHeaders(exchange: Pick<ProtocolExchange, 'set'>, { response, headers }: ProtocolAnswer): void {
  // One after the other rather than merged first: a name the binding sets again replaces the response's, in its place.
  for (const [name, value] of Object.entries(response.headers)) exchange.set(name, value);
  if (headers) for (const [name, value] of Object.entries(headers)) exchange.set(name, value);
}

export function sendProtocolResponse(ctx: AppContext, answer: ProtocolAnswer): void {
  ctx.status = answer.response.status;
  setAnswerHeaders(ctx, answer);
  ctx.type = 'application/json';
  ctx.body = answer.response.body;
}

/** Counts the request against the client address (these paths are not counted by the application-wide limiter). */
export async function rateLimit(ctx: AppContext, deps: Pick<WebDeps, 'rateLimiter'>): Promise<void> {
  await deps.rateLimiter.consume(ctx, addressKey(ctx.ip));
}

/** A binding's rendering of its protocol errors. */
export type ErrorRenderer = (error: ProtocolError) => ProtocolResponse;

/** A protocol error below 500 is an answer (stored under the key), rendered by the binding; anything else is thrown. */
function answerOf(error: unknown, render: ErrorRenderer): ProtocolResponse {
  if (error instanceof ProtocolError && error.status < 500) return render(error);
  throw error;
}

function answering<Answer>(operation: () => Answer, render: ErrorRenderer): Answer | ProtocolResponse {
  try {
    return operation();
  } catch (error) {
    return answerOf(error, render);
  }
}

/**
 * A create as the bindings plan it (or refuse it with an answer of their own before anything is read), its protocol
 * errors answered in the binding's shape.
 */
function plannedCreate(plan: () => ProtocolCreate, render: ErrorRenderer): ProtocolCreate {
  const planned = answering(plan, render);
  if ('refused' in planned) return { refused: planned.refused };
  if (!('input' in planned)) return { refused: planned };
  return {
    input: planned.input,
    respond: (outcome) => answering(() => planned.respond(outcome), render),
  };
}

/**
 * A binding's operation: a create's plan, or any other operation, its request checked by `prepare` (outside any
 * transaction: checking a body may take as long as the body is large) into what runs in the transaction that records
 * its answer.
 */
export type ProtocolOperation =
  { create: () => ProtocolCreate } | { prepare: () => (db: Db) => Promise<ProtocolResponse> };

/**
 * A create by a client whose access token was read earlier, not read again (createProtocolSessionUnderGrant: `grant`
 * is the token's hash, confirmed by the create's own store): its answer once stored, undefined when nothing was.
 */
export function createUnderGrant(
  deps: Deps,
  call: IdempotentRequest,
  create: () => CreatePlan,
  render: ErrorRenderer,
  grant: string,
): Promise<ProtocolResponse | undefined> {
  return createProtocolSessionUnderGrant(deps, call, plannedCreate(create, render), grant);
}

/**
 * Runs a binding's operation under the request's key (if any): a create in one read and one write
 * (createProtocolSession), any other checked first, then in one transaction (claimFirst). Protocol errors below
 * 500 are answers.
 */
export function runProtocolOperation(
  deps: Deps,
  call: IdempotentRequest | undefined,
  operation: ProtocolOperation,
  render: ErrorRenderer,
): Promise<KeyOutcome<ProtocolResponse>> {
  if ('create' in operation) return createProtocolSession(deps, call, plannedCreate(operation.create, render));
  const run = answering(operation.prepare, render);
  if (typeof run !== 'function') return claimFirst(deps, protocolKeys, call, { refused: run });
  return claimFirst(deps, protocolKeys, call, async (db) => {
    try {
      return await run(db);
    } catch (error) {
      return answerOf(error, render);
    }
  });
}
