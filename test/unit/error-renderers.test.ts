// One error hierarchy (src/domain/errors.ts), one renderer per surface: every kind of error, rendered by every
// surface's renderer, as the exact status, headers and body bytes that surface answers. A row per kind, a cell per
// surface: REST's contract shapes (read, page, checkout, oauth, and mcp for the MCP endpoints' refusals), ACP's flat
// Error, UCP's protocol error, and UCP over MCP's JSON-RPC error.
import { describe, expect, it } from 'vitest';
import {
  BadRequest,
  Conflict,
  DomainError,
  Forbidden,
  ForbiddenScope,
  InvalidClient,
  MethodNotAllowed,
  NotFound,
  NotSettled,
  PayloadTooLarge,
  ProcessorUnavailable,
  RateLimited,
  ServiceError,
  SurfaceError,
  Unauthorized,
  Unavailable,
  UnknownEndpoint,
  Unprocessable,
} from '../../src/domain/errors.js';
import { renderFailure } from '../../src/http/error-handler.js';
import type { ErrorShape } from '../../src/http/errors.js';
import { acpFailure, ucpFailure } from '../../src/http/protocol-errors.js';
import { ProtocolError } from '../../src/http/protocol-io.js';
import type { Logger } from '../../src/log.js';
import { errorAnswer, INVALID_PARAMS, RpcError } from '../../src/mcp/rpc.js';
import { UCP_VARIANT } from '../../src/mcp/ucp-server.js';

const BASE_URL = 'https://shop.example';

/** Each kind of error the service raises, and one failure it does not (`unexpected`). */
const KINDS: Record<string, () => unknown> = {
  bad_request: () =>
    new BadRequest('invalid_field', 'items[0].quantity must be at least 1.', { param: 'items[0].quantity' }),
  bad_signature: () => new BadRequest('invalid_signature', 'The signature does not verify.'),
  bad_scope: () => new BadRequest('invalid_scope', 'Unknown scope cart:read.', { param: 'scope' }),
  not_found: () => new NotFound('No cart cart_1 belongs to this client.', { param: 'id', next: { to: 'create_cart' } }),
  in_flight: () => new Conflict('idempotency_in_flight', 'A request with this key is in progress.', 1),
  cart_not_open: () =>
    new Conflict('line_item_unavailable', 'Only 3 of variant_a are available; requested 5.', undefined, {
      next: { to: 'change_cart_line', lineId: 'cali_1' },
      details: { available: 3 },
    }),
  unprocessable: () => new Unprocessable('idempotency_conflict', 'This key was used with another request.'),
  unauthorized: () => new Unauthorized('invalid_token', 'The token is not valid.', 'Bearer error="invalid_token"'),
  forbidden_scope: () => new ForbiddenScope('cart:write', 'The token lacks cart:write.', 'Bearer scope="cart:write"'),
  forbidden: () => new Forbidden('cross_site_request', 'Cross-site form posts are refused.'),
  invalid_client: () => new InvalidClient('Client authentication failed.'),
  rate_limited: () => new RateLimited('Too many requests.', 7),
  payload_too_large: () => new PayloadTooLarge('The request body is larger than the 100 kB limit.', { param: 'body' }),
  unavailable: () => new Unavailable(),
  not_settled: () => new NotSettled(3),
  processor_unavailable: () => new ProcessorUnavailable('The payment processor did not answer.'),
  unknown_endpoint: () => new UnknownEndpoint('GET', '/nope'),
  method_not_allowed: () => new MethodNotAllowed('DELETE', '/things', ['GET', 'POST']),
  protocol_error: () =>
    new ProtocolError(400, 'unsupported_api_version', 'API-Version 1999-01-01 is not supported.', {
      param: 'API-Version',
      details: { supported_versions: ['2026-04-17'] },
    }),
  protocol_error_headers: () =>
    new ProtocolError(409, 'idempotency_in_flight', 'A request with this key is in progress.', {
      headers: { 'Retry-After': '1' },
    }),
  rpc_error: () => new RpcError(INVALID_PARAMS, 'Invalid params: name is required.', { status: 400 }),
  unexpected: () => new Error('boom: internals'),
};

const SILENT = { error() {}, warn() {} } as unknown as Logger;
const log = () => SILENT;

type Surface = ErrorShape | 'acp' | 'ucp' | 'ucp_mcp';

/** What `surface` answers for `error`: status, headers (as JSON), and the body's exact bytes. */
function rendered(error: unknown, surface: Surface): string {
  const line = (status: number, headers: Record<string, string>, body: string) =>
    `${status} ${JSON.stringify(headers)} ${body}`;
  switch (surface) {
    case 'acp': {
      const { status, headers, body } = acpFailure(error, log);
      return line(status, headers, body);
    }
    case 'ucp': {
      const { status, headers, body } = ucpFailure(error, log, BASE_URL);
      return line(status, headers, body);
    }
    case 'ucp_mcp': {
      const rpcError = UCP_VARIANT.failure!(error, { ip: '192.0.2.1', idempotencyKeyHeader: '', log });
      const answer = errorAnswer(1, rpcError);
      if (answer.kind === 'accepted') throw new Error('an error is always answered');
      return line(answer.status, answer.headers, answer.json);
    }
    default: {
      const { status, headers, body } = renderFailure(error, surface, log, undefined);
      return line(status, headers, JSON.stringify(body));
    }
  }
}

const SURFACES: Surface[] = ['read', 'page', 'checkout', 'oauth', 'mcp', 'acp', 'ucp', 'ucp_mcp'];

// The answers many rows share: an error a surface has no words for is its internal error.
/** An unexpected error on the surfaces that are not a protocol's: a 500 that names nothing. */
const INTERNAL_ERROR: Pick<Record<Surface, string>, 'read' | 'page' | 'checkout' | 'oauth' | 'mcp'> = {
  read: '500 {"Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"An unexpected error occurred.","resolution":"Fix the request before retrying."}}',
  page: '500 {"Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"An unexpected error occurred.","resolution":"Fix the request before retrying."}}',
  checkout:
    '500 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"processing_error","code":"internal_error","message":"An unexpected error occurred."}',
  oauth:
    '500 {"Cache-Control":"no-store"} {"error":"server_error","error_description":"An unexpected error occurred."}',
  mcp: '500 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"An unexpected error occurred."}}',
};

/** An error the protocols have no code for (most of the service's own): a 500 that says nothing was charged. */
const NOTHING_CHARGED: Pick<Record<Surface, string>, 'acp' | 'ucp' | 'ucp_mcp'> = {
  acp: '500 {"Cache-Control":"no-store"} {"type":"processing_error","code":"internal_error","message":"An unexpected error occurred; nothing was charged."}',
  ucp: '500 {"Cache-Control":"no-store"} {"code":"internal_error","content":"An unexpected error occurred; nothing was charged.","continue_url":"https://shop.example/"}',
  ucp_mcp:
    '500 {} {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"An unexpected error occurred; nothing was charged.","data":{"code":"internal_error","content":"An unexpected error occurred; nothing was charged."}}}',
};

/** The exact answers: `status headers body`, headers as JSON, the body as its bytes. */
const TABLE: Record<string, Record<Surface, string>> = {
  bad_request: {
    read: '400 {"Cache-Control":"no-store"} {"error":{"code":"invalid_parameter","message":"items[0].quantity must be at least 1.","resolution":"Fix the named parameter; do not retry the request unchanged.","param":"items[0].quantity"}}',
    page: '400 {"Cache-Control":"no-store"} {"error":{"code":"invalid_parameter","message":"items[0].quantity must be at least 1.","resolution":"Fix the named parameter; do not retry the request unchanged.","param":"items[0].quantity"}}',
    checkout:
      '400 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"invalid_field","message":"items[0].quantity must be at least 1.","param":"items[0].quantity"}',
    oauth:
      '400 {"Cache-Control":"no-store"} {"error":"invalid_request","error_description":"items[0].quantity must be at least 1.","param":"items[0].quantity"}',
    mcp: '400 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"items[0].quantity must be at least 1."}}',
    ...NOTHING_CHARGED,
  },
  bad_signature: {
    read: '400 {"Cache-Control":"no-store"} {"error":{"code":"invalid_signature","message":"The signature does not verify.","resolution":"Fix the request before retrying."}}',
    page: '400 {"Cache-Control":"no-store"} {"error":{"code":"invalid_signature","message":"The signature does not verify.","resolution":"Fix the request before retrying."}}',
    checkout:
      '400 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"invalid_signature","message":"The signature does not verify."}',
    oauth:
      '400 {"Cache-Control":"no-store"} {"error":"invalid_request","error_description":"The signature does not verify."}',
    mcp: '400 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"The signature does not verify."}}',
    ...NOTHING_CHARGED,
  },
  bad_scope: {
    read: '400 {"Cache-Control":"no-store"} {"error":{"code":"invalid_parameter","message":"Unknown scope cart:read.","resolution":"Fix the named parameter; do not retry the request unchanged.","param":"scope"}}',
    page: '400 {"Cache-Control":"no-store"} {"error":{"code":"invalid_parameter","message":"Unknown scope cart:read.","resolution":"Fix the named parameter; do not retry the request unchanged.","param":"scope"}}',
    checkout:
      '400 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"invalid_field","message":"Unknown scope cart:read.","param":"scope"}',
    oauth:
      '400 {"Cache-Control":"no-store"} {"error":"invalid_scope","error_description":"Unknown scope cart:read.","param":"scope"}',
    mcp: '400 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Unknown scope cart:read."}}',
    ...NOTHING_CHARGED,
  },
  not_found: {
    read: '404 {"Cache-Control":"no-store"} {"error":{"code":"not_found","message":"No cart cart_1 belongs to this client; create one with POST /agent/carts.","resolution":"Check the id or handle; list the collection to find valid ones.","param":"id"}}',
    page: '404 {"Cache-Control":"no-store"} {"error":{"code":"not_found","message":"No cart cart_1 belongs to this client; create one with POST /agent/carts.","resolution":"Use the checkout_url of a session you created.","param":"id"}}',
    checkout:
      '404 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"session_not_found","message":"No cart cart_1 belongs to this client; create one with POST /agent/carts.","param":"id"}',
    oauth:
      '404 {"Cache-Control":"no-store"} {"error":"not_found","error_description":"No cart cart_1 belongs to this client; create one with POST /agent/carts.","param":"id"}',
    mcp: '404 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"No cart cart_1 belongs to this client."}}',
    ...NOTHING_CHARGED,
  },
  in_flight: {
    read: '409 {"Retry-After":"1","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"A request with this key is in progress.","resolution":"Fix the request before retrying."}}',
    page: '409 {"Retry-After":"1","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"A request with this key is in progress.","resolution":"Fix the request before retrying."}}',
    checkout:
      '409 {"Retry-After":"1","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"idempotency_in_flight","message":"A request with this key is in progress."}',
    oauth:
      '409 {"Retry-After":"1","Cache-Control":"no-store"} {"error":"invalid_request","error_description":"A request with this key is in progress."}',
    mcp: '409 {"Retry-After":"1","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"A request with this key is in progress.","data":{"retry_after":1}}}',
    ...NOTHING_CHARGED,
  },
  cart_not_open: {
    read: '409 {"Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"Only 3 of variant_a are available; requested 5.","resolution":"Change or remove line cali_1 (PATCH or DELETE /agent/carts/{id}/line-items/{line_id}), then retry."}}',
    page: '409 {"Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"Only 3 of variant_a are available; requested 5.","resolution":"Change or remove line cali_1 (PATCH or DELETE /agent/carts/{id}/line-items/{line_id}), then retry."}}',
    checkout:
      '409 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"invalid_field","message":"Only 3 of variant_a are available; requested 5. Change or remove line cali_1 (PATCH or DELETE /agent/carts/{id}/line-items/{line_id}), then retry.","available":3}',
    oauth:
      '409 {"Cache-Control":"no-store"} {"error":"line_item_unavailable","error_description":"Only 3 of variant_a are available; requested 5. Change or remove line cali_1 (PATCH or DELETE /agent/carts/{id}/line-items/{line_id}), then retry.","available":3}',
    mcp: '409 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Only 3 of variant_a are available; requested 5."}}',
    ...NOTHING_CHARGED,
  },
  unprocessable: {
    read: '422 {"Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"This key was used with another request.","resolution":"Fix the request before retrying."}}',
    page: '422 {"Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"This key was used with another request.","resolution":"Fix the request before retrying."}}',
    checkout:
      '422 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"idempotency_conflict","message":"This key was used with another request."}',
    oauth:
      '422 {"Cache-Control":"no-store"} {"error":"invalid_request","error_description":"This key was used with another request."}',
    mcp: '422 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"This key was used with another request."}}',
    ...NOTHING_CHARGED,
  },
  unauthorized: {
    read: '401 {"WWW-Authenticate":"Bearer error=\\"invalid_token\\"","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"The token is not valid.","resolution":"Fix the request before retrying."}}',
    page: '401 {"WWW-Authenticate":"Bearer error=\\"invalid_token\\"","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"The token is not valid.","resolution":"Fix the request before retrying."}}',
    checkout:
      '401 {"WWW-Authenticate":"Bearer error=\\"invalid_token\\"","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"internal_error","message":"The token is not valid."}',
    oauth:
      '401 {"WWW-Authenticate":"Bearer error=\\"invalid_token\\"","Cache-Control":"no-store"} {"error":"invalid_token","error_description":"The token is not valid."}',
    mcp: '401 {"WWW-Authenticate":"Bearer error=\\"invalid_token\\"","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"The token is not valid."}}',
    ...NOTHING_CHARGED,
  },
  forbidden_scope: {
    read: '403 {"WWW-Authenticate":"Bearer scope=\\"cart:write\\"","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"The token lacks cart:write.","resolution":"Fix the request before retrying."}}',
    page: '403 {"WWW-Authenticate":"Bearer scope=\\"cart:write\\"","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"The token lacks cart:write.","resolution":"Fix the request before retrying."}}',
    checkout:
      '403 {"WWW-Authenticate":"Bearer scope=\\"cart:write\\"","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"internal_error","message":"The token lacks cart:write.","scope":"cart:write"}',
    oauth:
      '403 {"WWW-Authenticate":"Bearer scope=\\"cart:write\\"","Cache-Control":"no-store"} {"error":"insufficient_scope","error_description":"The token lacks cart:write.","scope":"cart:write"}',
    mcp: '403 {"WWW-Authenticate":"Bearer scope=\\"cart:write\\"","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"The token lacks cart:write."}}',
    ...NOTHING_CHARGED,
  },
  forbidden: {
    read: '403 {"Cache-Control":"no-store"} {"error":{"code":"cross_site_request","message":"Cross-site form posts are refused.","resolution":"Fix the request before retrying."}}',
    page: '403 {"Cache-Control":"no-store"} {"error":{"code":"cross_site_request","message":"Cross-site form posts are refused.","resolution":"Fix the request before retrying."}}',
    checkout:
      '403 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"internal_error","message":"Cross-site form posts are refused."}',
    oauth:
      '403 {"Cache-Control":"no-store"} {"error":"server_error","error_description":"Cross-site form posts are refused."}',
    mcp: '403 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Cross-site form posts are refused."}}',
    ...NOTHING_CHARGED,
  },
  invalid_client: {
    read: '401 {"WWW-Authenticate":"Basic realm=\\"agent\\", charset=\\"UTF-8\\"","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"Client authentication failed.","resolution":"Fix the request before retrying."}}',
    page: '401 {"WWW-Authenticate":"Basic realm=\\"agent\\", charset=\\"UTF-8\\"","Cache-Control":"no-store"} {"error":{"code":"internal_error","message":"Client authentication failed.","resolution":"Fix the request before retrying."}}',
    checkout:
      '401 {"WWW-Authenticate":"Basic realm=\\"agent\\", charset=\\"UTF-8\\"","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"internal_error","message":"Client authentication failed."}',
    oauth:
      '401 {"WWW-Authenticate":"Basic realm=\\"agent\\", charset=\\"UTF-8\\"","Cache-Control":"no-store"} {"error":"invalid_client","error_description":"Client authentication failed."}',
    mcp: '401 {"WWW-Authenticate":"Basic realm=\\"agent\\", charset=\\"UTF-8\\"","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Client authentication failed."}}',
    ...NOTHING_CHARGED,
  },
  rate_limited: {
    read: '429 {"Retry-After":"7","Cache-Control":"no-store"} {"error":{"code":"rate_limited","message":"Too many requests.","resolution":"Wait for the number of seconds in Retry-After, then retry."}}',
    page: '429 {"Retry-After":"7","Cache-Control":"no-store"} {"error":{"code":"rate_limited","message":"Too many requests.","resolution":"Wait for the number of seconds in Retry-After, then retry."}}',
    checkout:
      '429 {"Retry-After":"7","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"rate_limit_exceeded","code":"rate_limited","message":"Too many requests."}',
    oauth:
      '429 {"Retry-After":"7","Cache-Control":"no-store"} {"error":"rate_limited","error_description":"Too many requests."}',
    mcp: '429 {"Retry-After":"7","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Too many requests.","data":{"retry_after":7}}}',
    acp: '429 {"Retry-After":"7","Cache-Control":"no-store"} {"type":"service_unavailable","code":"rate_limit_exceeded","message":"Too many requests."}',
    ucp: '429 {"Retry-After":"7","Cache-Control":"no-store"} {"code":"rate_limited","content":"Too many requests.","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '429 {"Retry-After":"7"} {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Too many requests.","data":{"code":"rate_limited","content":"Too many requests.","retry_after":7}}}',
  },
  payload_too_large: {
    read: '413 {"Cache-Control":"no-store"} {"error":{"code":"payload_too_large","message":"The request body is larger than the 100 kB limit.","resolution":"Fix the request before retrying.","param":"body"}}',
    page: '413 {"Cache-Control":"no-store"} {"error":{"code":"payload_too_large","message":"The request body is larger than the 100 kB limit.","resolution":"Fix the request before retrying.","param":"body"}}',
    checkout:
      '413 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"payload_too_large","message":"The request body is larger than the 100 kB limit.","param":"body"}',
    oauth:
      '413 {"Cache-Control":"no-store"} {"error":"payload_too_large","error_description":"The request body is larger than the 100 kB limit.","param":"body"}',
    mcp: '413 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"The request body is larger than the 100 kB limit."}}',
    ...NOTHING_CHARGED,
  },
  unavailable: {
    read: '502 {"Retry-After":"5","Cache-Control":"no-store"} {"error":{"code":"catalog_unavailable","message":"The catalog is temporarily unreachable.","resolution":"Transient: retry with exponential backoff."}}',
    page: '502 {"Retry-After":"5","Cache-Control":"no-store"} {"error":{"code":"catalog_unavailable","message":"The catalog is temporarily unreachable.","resolution":"Transient: retry with exponential backoff."}}',
    checkout:
      '503 {"Retry-After":"5","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"service_unavailable","code":"service_unavailable","message":"Checkout is temporarily unavailable; nothing was created or charged."}',
    oauth:
      '503 {"Retry-After":"5","Cache-Control":"no-store"} {"error":"temporarily_unavailable","error_description":"The service is temporarily unavailable; retry with backoff."}',
    mcp: '503 {"Retry-After":"5","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"The store is temporarily unavailable. Transient: retry with backoff.","data":{"retry_after":5}}}',
    acp: '503 {"Retry-After":"5","Cache-Control":"no-store"} {"type":"service_unavailable","code":"service_unavailable","message":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds."}',
    ucp: '503 {"Retry-After":"5","Cache-Control":"no-store"} {"code":"service_unavailable","content":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '503 {"Retry-After":"5"} {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.","data":{"code":"service_unavailable","content":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.","retry_after":5}}}',
  },
  not_settled: {
    read: '502 {"Retry-After":"1","Cache-Control":"no-store"} {"error":{"code":"catalog_unavailable","message":"The catalog is temporarily unreachable.","resolution":"Transient: retry with exponential backoff."}}',
    page: '502 {"Retry-After":"1","Cache-Control":"no-store"} {"error":{"code":"catalog_unavailable","message":"The catalog is temporarily unreachable.","resolution":"Transient: retry with exponential backoff."}}',
    checkout:
      '503 {"Retry-After":"1","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"service_unavailable","code":"service_unavailable","message":"Checkout is temporarily unavailable; nothing was created or charged."}',
    oauth:
      '503 {"Retry-After":"1","Cache-Control":"no-store"} {"error":"temporarily_unavailable","error_description":"The service is temporarily unavailable; retry with backoff."}',
    mcp: '503 {"Retry-After":"1","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"The store is temporarily unavailable. Transient: retry with backoff.","data":{"retry_after":1}}}',
    acp: '503 {"Retry-After":"1","Cache-Control":"no-store"} {"type":"service_unavailable","code":"service_unavailable","message":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds."}',
    ucp: '503 {"Retry-After":"1","Cache-Control":"no-store"} {"code":"service_unavailable","content":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '503 {"Retry-After":"1"} {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.","data":{"code":"service_unavailable","content":"The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.","retry_after":1}}}',
  },
  processor_unavailable: {
    read: '502 {"Retry-After":"5","Cache-Control":"no-store"} {"error":{"code":"payment_processor_unavailable","message":"The payment processor did not answer.","resolution":"Reload the page in a few seconds."}}',
    page: '502 {"Retry-After":"5","Cache-Control":"no-store"} {"error":{"code":"payment_processor_unavailable","message":"The payment processor did not answer.","resolution":"Reload the page in a few seconds."}}',
    checkout:
      '502 {"Retry-After":"5","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"processing_error","code":"internal_error","message":"The payment processor did not answer. Reload the page in a few seconds."}',
    oauth:
      '502 {"Retry-After":"5","Cache-Control":"no-store"} {"error":"server_error","error_description":"The payment processor did not answer. Reload the page in a few seconds."}',
    mcp: '502 {"Retry-After":"5","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"The payment processor did not answer.","data":{"retry_after":5}}}',
    ...NOTHING_CHARGED,
  },
  unknown_endpoint: {
    read: '404 {"Cache-Control":"no-store"} {"error":{"code":"unknown_endpoint","message":"No endpoint answers GET /nope.","resolution":"Use a documented operation; the contract is at /openapi.json and /docs."}}',
    page: '404 {"Cache-Control":"no-store"} {"error":{"code":"unknown_endpoint","message":"No endpoint answers GET /nope.","resolution":"Use a documented operation; the contract is at /openapi.json and /docs."}}',
    checkout:
      '404 {"Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"unknown_endpoint","message":"No endpoint answers GET /nope."}',
    oauth:
      '404 {"Cache-Control":"no-store"} {"error":"unknown_endpoint","error_description":"No endpoint answers GET /nope."}',
    mcp: '404 {"Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"No endpoint answers GET /nope."}}',
    acp: '404 {"Cache-Control":"no-store"} {"type":"invalid_request","code":"unknown_endpoint","message":"No endpoint answers GET /nope."}',
    ucp: '404 {"Cache-Control":"no-store"} {"code":"unknown_endpoint","content":"No endpoint answers GET /nope.","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '404 {} {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"No endpoint answers GET /nope.","data":{"code":"unknown_endpoint","content":"No endpoint answers GET /nope."}}}',
  },
  method_not_allowed: {
    read: '405 {"Allow":"GET, POST","Cache-Control":"no-store"} {"error":{"code":"method_not_allowed","message":"DELETE is not supported on /things; use GET or POST.","resolution":"Use one of the methods in the Allow header."}}',
    page: '405 {"Allow":"GET, POST","Cache-Control":"no-store"} {"error":{"code":"method_not_allowed","message":"DELETE is not supported on /things; use GET or POST.","resolution":"Use one of the methods in the Allow header."}}',
    checkout:
      '405 {"Allow":"GET, POST","Cache-Control":"no-store","API-Version":"2026-07-16"} {"type":"invalid_request","code":"method_not_allowed","message":"DELETE is not supported on /things; use GET or POST."}',
    oauth:
      '405 {"Allow":"GET, POST","Cache-Control":"no-store"} {"error":"method_not_allowed","error_description":"DELETE is not supported on /things; use GET or POST."}',
    mcp: '405 {"Allow":"GET, POST","Cache-Control":"no-store"} {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"DELETE is not supported on /things; use GET or POST."}}',
    acp: '405 {"Allow":"GET, POST","Cache-Control":"no-store"} {"type":"invalid_request","code":"method_not_allowed","message":"DELETE is not supported on /things; use GET or POST."}',
    ucp: '405 {"Allow":"GET, POST","Cache-Control":"no-store"} {"code":"method_not_allowed","content":"DELETE is not supported on /things; use GET or POST.","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '405 {} {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"DELETE is not supported on /things; use GET or POST.","data":{"code":"method_not_allowed","content":"DELETE is not supported on /things; use GET or POST."}}}',
  },
  protocol_error: {
    ...INTERNAL_ERROR,
    acp: '400 {"Cache-Control":"no-store"} {"type":"invalid_request","code":"unsupported_api_version","message":"API-Version 1999-01-01 is not supported.","param":"API-Version","supported_versions":["2026-04-17"]}',
    ucp: '400 {"Cache-Control":"no-store"} {"code":"unsupported_api_version","content":"API-Version 1999-01-01 is not supported.","path":"API-Version","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '400 {} {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"API-Version 1999-01-01 is not supported.","data":{"code":"unsupported_api_version","content":"API-Version 1999-01-01 is not supported.","path":"API-Version"}}}',
  },
  protocol_error_headers: {
    ...INTERNAL_ERROR,
    acp: '409 {"Retry-After":"1","Cache-Control":"no-store"} {"type":"invalid_request","code":"idempotency_in_flight","message":"A request with this key is in progress."}',
    ucp: '409 {"Retry-After":"1","Cache-Control":"no-store"} {"code":"idempotency_in_flight","content":"A request with this key is in progress.","continue_url":"https://shop.example/"}',
    ucp_mcp:
      '409 {"Retry-After":"1"} {"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"A request with this key is in progress.","data":{"code":"idempotency_in_flight","content":"A request with this key is in progress.","retry_after":1}}}',
  },
  rpc_error: {
    ...INTERNAL_ERROR,
    ...NOTHING_CHARGED,
  },
  unexpected: {
    ...INTERNAL_ERROR,
    ...NOTHING_CHARGED,
  },
};

describe('one error hierarchy', () => {
  it("every error the service raises is a ServiceError; a surface's own errors are SurfaceErrors, not kinds", () => {
    for (const [kind, make] of Object.entries(KINDS)) {
      const error = make();
      expect(error instanceof ServiceError, kind).toBe(kind !== 'unexpected');
      const ownTerms = kind.startsWith('protocol_error') || kind === 'rpc_error';
      expect(error instanceof SurfaceError, kind).toBe(ownTerms);
      expect(error instanceof DomainError, kind).toBe(kind !== 'unexpected' && !ownTerms);
    }
    expect(new ProtocolError(404, 'not_found', 'No such checkout.').name).toBe('ProtocolError');
    expect(new RpcError(INVALID_PARAMS, 'Invalid params.').name).toBe('RpcError');
  });

  it('covers every kind on every surface', () => {
    expect(Object.keys(TABLE)).toEqual(Object.keys(KINDS));
    for (const row of Object.values(TABLE)) expect(Object.keys(row)).toEqual(SURFACES);
  });

  it.each(Object.keys(KINDS))('%s: each surface renders it in its own shape', (kind) => {
    const error = KINDS[kind]!;
    const answers = Object.fromEntries(SURFACES.map((surface) => [surface, rendered(error(), surface)]));
    expect(answers).toEqual(TABLE[kind]);
  });
});
