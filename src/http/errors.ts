// The one error type of the service and its rendering into the three documented shapes.
// Handlers and domain code throw ApiError; the error middleware picks the shape from the surface the path belongs to.

export type Surface = 'read' | 'checkout' | 'oauth';

export interface ApiErrorOptions {
  /** The offending parameter or field path, e.g. `limit` or `items[0].quantity`. */
  param?: string;
  /** What the client should do next (read-endpoint shape). */
  resolution?: string;
  /** Extra documented fields of the flat checkout shape, e.g. `supported_versions`. */
  details?: Record<string, unknown>;
  /** Response headers the error carries, e.g. `Retry-After`, `WWW-Authenticate`, `Allow`. */
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly options: ApiErrorOptions = {},
  ) {
    super(message);
  }
}

export function surfaceOf(path: string): Surface {
  if (/^\/checkout[-_]sessions(\/|$)/.test(path)) return 'checkout';
  if (/^\/(oauth|agent|\.well-known)(\/|$)/.test(path)) return 'oauth';
  return 'read';
}

const DEFAULT_RESOLUTION: Record<string, string> = {
  invalid_parameter: 'Fix the named parameter; do not retry the request unchanged.',
  not_found: 'Check the id or handle; list the collection to find valid ones.',
  unknown_endpoint: 'Use a documented operation; the contract is at /openapi.json and /docs.',
  method_not_allowed: 'Use one of the methods in the Allow header.',
  rate_limited: 'Wait for the number of seconds in Retry-After, then retry.',
  catalog_unavailable: 'Transient: retry with exponential backoff.',
};

function checkoutType(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status === 503) return 'service_unavailable';
  if (status >= 500) return 'processing_error';
  return 'invalid_request';
}

export function renderError(error: ApiError, surface: Surface): Record<string, unknown> {
  const { param, resolution, details } = error.options;
  switch (surface) {
    case 'read':
      return {
        error: {
          code: error.code,
          message: error.message,
          resolution: resolution ?? DEFAULT_RESOLUTION[error.code] ?? 'Fix the request before retrying.',
          ...(param === undefined ? {} : { param }),
        },
      };
    case 'checkout':
      return { type: checkoutType(error.status), code: error.code, message: error.message, ...(param === undefined ? {} : { param }), ...details };
    case 'oauth':
      return { error: error.code, error_description: error.message, ...(param === undefined ? {} : { param }), ...details };
  }
}

/**
 * The code of a 400 on each surface: reads say `invalid_parameter`, OAuth and agent RFC 6749's `invalid_request`;
 * checkout names the problem precisely (`checkoutCode`).
 */
export function badRequestCode(surface: Surface, checkoutCode: string): string {
  return surface === 'read' ? 'invalid_parameter' : surface === 'oauth' ? 'invalid_request' : checkoutCode;
}

/** A path that is not valid percent-encoding cannot name any endpoint (and would make the router throw). */
export function isDecodable(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The error every surface gives for a path with no endpoint. */
export function unknownEndpoint(method: string, path: string): ApiError {
  return new ApiError(404, 'unknown_endpoint', `No endpoint answers ${method} ${path}.`);
}

export function methodNotAllowed(method: string, path: string, allowed: string[]): ApiError {
  return new ApiError(405, 'method_not_allowed', `${method} is not supported on ${path}; use ${allowed.join(' or ')}.`, {
    headers: { Allow: allowed.join(', ') },
  });
}

/** The error for a database that cannot be reached: transient on every surface, in that surface's words. */
export function databaseUnavailable(surface: Surface): ApiError {
  switch (surface) {
    case 'read':
      return new ApiError(502, 'catalog_unavailable', 'The catalog is temporarily unreachable.', { headers: { 'Retry-After': '5' } });
    case 'checkout':
      return new ApiError(503, 'service_unavailable', 'Checkout is temporarily unavailable; nothing was created or charged.', {
        headers: { 'Retry-After': '5' },
      });
    case 'oauth':
      return new ApiError(503, 'temporarily_unavailable', 'The service is temporarily unavailable; retry with backoff.', {
        headers: { 'Retry-After': '5' },
      });
  }
}
