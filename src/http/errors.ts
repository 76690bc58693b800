// Renders the service's errors (src/domain/errors.ts) in the documented shape of each HTTP surface: status, code,
// headers and body, all decided here. Every code is typed by the contract's error schemas, so a code the contract
// does not enumerate does not compile.
import type { components } from '../../codegen/types.js';
import {
  BadRequest,
  Conflict,
  DomainError,
  Forbidden,
  ForbiddenScope,
  InvalidClient,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  ProcessorUnavailable,
  RateLimited,
  Unauthorized,
  Unavailable,
  UnknownEndpoint,
  Unprocessable,
  type BadRequestReason,
  type NextStep,
} from '../domain/errors.js';

type Schemas = components['schemas'];
type ReadCode = Schemas['ReadError']['error']['code'];
type CheckoutCode = Schemas['CheckoutError']['code'];
type OAuthCode = Schemas['OAuthError']['error'];

/**
 * The documented error shapes: `read` (`ReadError`), `checkout` (`CheckoutError`), `oauth` (`OAuthError`, also the
 * agent API's), `page` (the read shape, with the buyer pages' advice) and `mcp` (`JsonRpcErrorResponse`, for the MCP
 * endpoints, whose clients read JSON-RPC whatever the status). Each surface of src/http/surfaces.ts names the shape
 * its errors take.
 */
export type ErrorShape = 'read' | 'checkout' | 'oauth' | 'page' | 'mcp';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: Schemas['ReadError'] | Schemas['CheckoutError'] | Schemas['OAuthError'] | Schemas['JsonRpcErrorResponse'];
}

// JSON-RPC 2.0: a server-defined error (the MCP transports' refusals, a rate limit) and an internal error.
const JSON_RPC_SERVER_ERROR = -32000;
const JSON_RPC_INTERNAL_ERROR = -32603;

/** A path that is not valid percent-encoding cannot name any endpoint (and would make the router throw). */
export function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

function statusOf(error: DomainError | undefined, shape: ErrorShape): number {
  if (error instanceof BadRequest) return 400;
  if (error instanceof InvalidClient || error instanceof Unauthorized) return 401;
  if (error instanceof ForbiddenScope || error instanceof Forbidden) return 403;
  if (error instanceof NotFound || error instanceof UnknownEndpoint) return 404;
  if (error instanceof MethodNotAllowed) return 405;
  if (error instanceof Conflict) return 409;
  if (error instanceof PayloadTooLarge) return 413;
  if (error instanceof Unprocessable) return 422;
  if (error instanceof RateLimited) return 429;
  // Reads are served from the database through this process: a gateway that cannot reach its origin.
  if (error instanceof Unavailable) return shape === 'read' || shape === 'page' ? 502 : 503;
  if (error instanceof ProcessorUnavailable) return 502;
  return 500;
}

function headersOf(error: DomainError | undefined): Record<string, string> {
  if (error instanceof RateLimited || error instanceof Unavailable || error instanceof ProcessorUnavailable)
    return { 'Retry-After': String(error.retryAfterSeconds) };
  if (error instanceof Conflict && error.retryAfterSeconds !== undefined)
    return { 'Retry-After': String(error.retryAfterSeconds) };
  if ((error instanceof Unauthorized || error instanceof ForbiddenScope) && error.challenge)
    return { 'WWW-Authenticate': error.challenge };
  if (error instanceof InvalidClient) return { 'WWW-Authenticate': 'Basic realm="agent", charset="UTF-8"' };
  if (error instanceof MethodNotAllowed) return { Allow: error.allowed.join(', ') };
  return {};
}

function readCode(error: DomainError | undefined): ReadCode {
  if (error instanceof BadRequest)
    return error.reason === 'invalid_signature' ? 'invalid_signature' : 'invalid_parameter';
  if (error instanceof NotFound) return 'not_found';
  if (error instanceof Forbidden) return error.reason;
  if (error instanceof UnknownEndpoint) return 'unknown_endpoint';
  if (error instanceof MethodNotAllowed) return 'method_not_allowed';
  if (error instanceof PayloadTooLarge) return 'payload_too_large';
  if (error instanceof RateLimited) return 'rate_limited';
  if (error instanceof Unavailable) return 'catalog_unavailable';
  if (error instanceof ProcessorUnavailable) return 'payment_processor_unavailable';
  return 'internal_error';
}

const OAUTH_REASONS = new Set<BadRequestReason>([
  'invalid_request',
  'invalid_scope',
  'unsupported_grant_type',
  'invalid_client_metadata',
]);

function checkoutCode(error: DomainError | undefined): CheckoutCode {
  // The OAuth reasons never arise on checkout; were one to, it is a field the request got wrong.
  if (error instanceof BadRequest)
    return OAUTH_REASONS.has(error.reason) ? 'invalid_field' : (error.reason as CheckoutCode);
  if (error instanceof NotFound) return 'session_not_found';
  if (error instanceof Conflict)
    return error.reason === 'idempotency_in_flight' ||
      error.reason === 'session_completed' ||
      error.reason === 'session_canceled'
      ? error.reason
      : 'invalid_field';
  if (error instanceof Unprocessable) return error.reason;
  if (error instanceof UnknownEndpoint) return 'unknown_endpoint';
  if (error instanceof MethodNotAllowed) return 'method_not_allowed';
  if (error instanceof PayloadTooLarge) return 'payload_too_large';
  if (error instanceof RateLimited) return 'rate_limited';
  if (error instanceof Unavailable) return 'service_unavailable';
  return 'internal_error';
}

function oauthCode(error: DomainError | undefined): OAuthCode {
  // RFC 6749 has one code for a malformed request; the precise reason stays in the description and `param`.
  if (error instanceof BadRequest)
    return OAUTH_REASONS.has(error.reason) ? (error.reason as OAuthCode) : 'invalid_request';
  if (error instanceof Unauthorized) return error.reason;
  if (error instanceof ForbiddenScope) return 'insufficient_scope';
  if (error instanceof InvalidClient) return 'invalid_client';
  if (error instanceof NotFound) return 'not_found';
  if (error instanceof Conflict)
    return error.reason === 'idempotency_in_flight' ||
      error.reason === 'session_completed' ||
      error.reason === 'session_canceled'
      ? 'invalid_request'
      : error.reason;
  if (error instanceof Unprocessable) return 'invalid_request';
  if (error instanceof UnknownEndpoint) return 'unknown_endpoint';
  if (error instanceof MethodNotAllowed) return 'method_not_allowed';
  if (error instanceof PayloadTooLarge) return 'payload_too_large';
  if (error instanceof RateLimited) return 'rate_limited';
  if (error instanceof Unavailable) return 'temporarily_unavailable';
  return 'server_error';
}

const UNAVAILABLE_MESSAGES: Record<ErrorShape, string> = {
  read: 'The catalog is temporarily unreachable.',
  page: 'The catalog is temporarily unreachable.',
  checkout: 'Checkout is temporarily unavailable; nothing was created or charged.',
  oauth: 'The service is temporarily unavailable; retry with backoff.',
  mcp: 'The store is temporarily unavailable. Transient: retry with backoff.',
};

/**
 * A next step (src/domain/errors.ts) in REST's words, naming the route to take. A `clause` continues the message's
 * sentence; any other is advice of its own (the read shape's `resolution`, or a sentence after the message).
 */
function restNextStep(next: NextStep): { text: string; clause?: true } {
  switch (next.to) {
    case 'list_products':
      return { text: 'List products with GET /api/store/products.' };
    case 'find_product':
      return { text: 'List products with GET /api/store/products and use an id from there (or filter by handle).' };
    case 'list_regions':
      return {
        text: 'Use an id from GET /api/store/regions, or omit region_id for the default region (United States, USD).',
      };
    case 'list_agent_products':
      return { text: 'List products with GET /agent/products.' };
    case 'list_agent_collections':
      return { text: 'Use an id or handle from GET /agent/collections.' };
    case 'list_agent_categories':
      return { text: 'Use an id or handle from GET /agent/categories.' };
    case 'create_cart':
      return { text: 'create one with POST /agent/carts', clause: true };
    case 'create_new_cart':
      return { text: 'create a new cart with POST /agent/carts', clause: true };
    case 'add_cart_line':
      return { text: 'add one with POST /agent/carts/{id}/line-items first', clause: true };
    case 'change_cart_line':
      return {
        text: `Change or remove line ${next.lineId} (PATCH or DELETE /agent/carts/{id}/line-items/{line_id}), then retry.`,
      };
  }
}

function messageOf(error: DomainError | undefined, shape: ErrorShape): string {
  if (error instanceof Unavailable) return UNAVAILABLE_MESSAGES[shape];
  if (!error) return 'An unexpected error occurred.';
  const step = shape === 'mcp' || !error.next ? undefined : restNextStep(error.next);
  return step?.clause ? `${error.message.slice(0, -1)}; ${step.text}.` : error.message;
}

/** What to do next, when the error says more than the surface's default advice. */
function resolutionOf(error: DomainError | undefined): string | undefined {
  if (error?.resolution !== undefined) return error.resolution;
  const step = error?.next && restNextStep(error.next);
  return step && !step.clause ? step.text : undefined;
}

/** The message with the error's REST advice, for the shapes that have no field of their own for it. */
function messageWithResolution(error: DomainError | undefined, shape: ErrorShape): string {
  const message = messageOf(error, shape);
  const resolution = resolutionOf(error);
  return resolution ? `${message} ${resolution}` : message;
}

const READ_RESOLUTIONS: Partial<Record<ReadCode, string>> = {
  invalid_parameter: 'Fix the named parameter; do not retry the request unchanged.',
  not_found: 'Check the id or handle; list the collection to find valid ones.',
  unknown_endpoint: 'Use a documented operation; the contract is at /openapi.json and /docs.',
  method_not_allowed: 'Use one of the methods in the Allow header.',
  rate_limited: 'Wait for the number of seconds in Retry-After, then retry.',
  catalog_unavailable: 'Transient: retry with exponential backoff.',
};
const PAGE_RESOLUTIONS: Partial<Record<ReadCode, string>> = {
  ...READ_RESOLUTIONS,
  not_found: 'Use the checkout_url of a session you created.',
};

function checkoutType(status: number): Schemas['CheckoutError']['type'] {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 503) return 'service_unavailable';
  if (status >= 500) return 'processing_error';
  return 'invalid_request';
}

/** The response for `thrown` in `shape`; anything that is not a DomainError is an unexpected failure (500). */
export function renderError(thrown: unknown, shape: ErrorShape): RenderedError {
  const error = thrown instanceof DomainError ? thrown : undefined;
  const status = statusOf(error, shape);
  const headers = headersOf(error);
  const param = error?.param === undefined ? {} : { param: error.param };
  switch (shape) {
    case 'read':
    case 'page': {
      const code = readCode(error);
      const resolution =
        resolutionOf(error) ??
        (shape === 'page' ? PAGE_RESOLUTIONS : READ_RESOLUTIONS)[code] ??
        'Fix the request before retrying.';
      return { status, headers, body: { error: { code, message: messageOf(error, shape), resolution, ...param } } };
    }
    case 'checkout':
      return {
        status,
        headers,
        body: {
          type: checkoutType(status),
          code: checkoutCode(error),
          message: messageWithResolution(error, shape),
          ...param,
          ...error?.details,
        },
      };
    case 'mcp': {
      // No id: the message is never read once the request is refused. Retry-After is repeated for clients that see
      // only the JSON-RPC error.
      const retryAfter = headers['Retry-After'];
      return {
        status,
        headers,
        body: {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: status >= 500 && status !== 503 ? JSON_RPC_INTERNAL_ERROR : JSON_RPC_SERVER_ERROR,
            message: messageOf(error, shape),
            ...(retryAfter === undefined ? {} : { data: { retry_after: Number(retryAfter) } }),
          },
        },
      };
    }
    case 'oauth':
      return {
        status,
        headers,
        body: {
          error: oauthCode(error),
          error_description: messageWithResolution(error, shape),
          ...param,
          ...error?.details,
        },
      };
  }
}
