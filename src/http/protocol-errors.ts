// The protocol bindings' error renderers (src/domain/errors.ts has the hierarchy): a ProtocolError is an error in a
// binding's own terms (status, code), and every other failure on a protocol surface becomes one (protocolErrorOf).
// ACP renders it as its flat Error, typed from ACP's schema (codegen/protocol-types.ts); UCP as its protocol error
// (overview, Error Handling: the protocol defines it in prose only). The JSON-RPC bindings' renderers are in
// src/mcp/rpc.ts (RpcError) and src/mcp/ucp-server.ts (rpcErrorOf).
import type { components as ProtocolSchemas } from '../../codegen/protocol-types.js';
import { isDatabaseUnavailable } from '../db/knex.js';
import { MethodNotAllowed, RateLimited, SurfaceError, Unavailable, UnknownEndpoint } from '../domain/errors.js';
import type { Logger } from '../log.js';
import type { ProtocolResponse } from '../protocols/answers.js';

/** ACP 2026-04-17's `Error`, as its schema says. */
export type AcpError = ProtocolSchemas['schemas']['AcpError'];

/** UCP's protocol-error body (overview, Error Handling): `code`, `content`, optional `path`, and where to continue. */
export interface UcpErrorBody {
  code: string;
  content: string;
  path?: string;
  continue_url?: string;
}

/** An error answered in a binding's own shape: status and code are the protocol's (rendered below). */
export class ProtocolError extends SurfaceError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: { param?: string; headers?: Record<string, string>; details?: Record<string, unknown> } = {},
  ) {
    super(message);
  }
}

/** The code each protocol gives the shared rate limit's refusal. */
export interface ProtocolCodes {
  rateLimited: string;
}

/** ACP's: there is no rate-limit type, so a 429 is `service_unavailable` with this code (B.9 #11). */
export const ACP_CODES: ProtocolCodes = { rateLimited: 'rate_limit_exceeded' };
export const UCP_CODES: ProtocolCodes = { rateLimited: 'rate_limited' };

/**
 * What any failure is on a protocol surface: its own errors as they are; the route, the rate limit and an unreachable
 * database with the protocol's `rateLimited` code; anything else a logged 500 without internals.
 */
export function protocolErrorOf(error: unknown, log: () => Logger, codes: ProtocolCodes): ProtocolError {
  if (error instanceof ProtocolError) return error;
  if (error instanceof UnknownEndpoint) return new ProtocolError(404, 'unknown_endpoint', error.message);
  if (error instanceof MethodNotAllowed)
    return new ProtocolError(405, 'method_not_allowed', error.message, {
      headers: { Allow: error.allowed.join(', ') },
    });
  if (error instanceof RateLimited)
    return new ProtocolError(429, codes.rateLimited, error.message, {
      headers: { 'Retry-After': String(error.retryAfterSeconds) },
    });
  const unavailable =
    error instanceof Unavailable ? error : isDatabaseUnavailable(error) ? new Unavailable() : undefined;
  if (unavailable) {
    return new ProtocolError(
      503,
      'service_unavailable',
      'The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.',
      { headers: { 'Retry-After': String(unavailable.retryAfterSeconds) } },
    );
  }
  log().error({ err: error }, 'request failed');
  return new ProtocolError(500, 'internal_error', 'An unexpected error occurred; nothing was charged.');
}

/** A JSON answer, serialised once: these exact bytes are sent, and stored for replays. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): ProtocolResponse {
  return { status, body: JSON.stringify(body), headers };
}

/** A binding's failure answer as sent: never stored by a cache. */
export function notStored(response: ProtocolResponse): ProtocolResponse {
  return { ...response, headers: { ...response.headers, 'Cache-Control': 'no-store' } };
}

/** ACP's error type for a status: there is no rate-limit type, so a 429 is `service_unavailable` (B.9 #11). */
function acpErrorType(status: number): AcpError['type'] {
  if (status === 429 || status === 503) return 'service_unavailable';
  return status >= 500 ? 'processing_error' : 'invalid_request';
}

/** ACP's flat Error: `type`, `code`, `message`, `param` (a JSONPath, or the header's name), and documented extras. */
export function acpErrorBody(error: ProtocolError): AcpError {
  const { param, details } = error.options;
  return {
    type: acpErrorType(error.status),
    code: error.code,
    message: error.message,
    ...(param ? { param } : {}),
    ...details,
  };
}

/** ACP's flat Error as answered (and stored under the request's key, below 500). */
export function renderAcpError(error: ProtocolError): ProtocolResponse {
  return jsonResponse(error.status, acpErrorBody(error), { ...error.options.headers });
}

/** Any failure on an ACP surface, as answered: ACP's flat Error, `no-store`. */
export function acpFailure(error: unknown, log: () => Logger): ProtocolResponse {
  return notStored(renderAcpError(protocolErrorOf(error, log, ACP_CODES)));
}

/** UCP's protocol error; `continueUrl` is where the buyer continues (the store's front page). */
export function ucpErrorBody(error: ProtocolError, continueUrl?: string): UcpErrorBody {
  return {
    code: error.code,
    content: error.message,
    ...(error.options.param ? { path: error.options.param } : {}),
    ...(continueUrl === undefined ? {} : { continue_url: continueUrl }),
  };
}

/** UCP's protocol error as answered (`body` when it was rendered already). */
export function renderUcpError(
  error: ProtocolError,
  baseUrl: string,
  body = ucpErrorBody(error, `${baseUrl}/`),
): ProtocolResponse {
  return jsonResponse(error.status, body, { ...error.options.headers });
}

/** Any failure on a UCP surface, as answered: UCP's protocol error, `no-store`. */
export function ucpFailure(error: unknown, log: () => Logger, baseUrl: string): ProtocolResponse {
  return notStored(renderUcpError(protocolErrorOf(error, log, UCP_CODES), baseUrl));
}
