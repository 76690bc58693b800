// The one place errors become responses: every thrown error is rendered in the documented shape of the surface the
// path belongs to. Unexpected errors are logged and answered without internals.
import { isDatabaseUnavailable } from '../db/knex.js';
import type { AppMiddleware } from './context.js';
import { ApiError, databaseUnavailable, renderError, surfaceOf, type Surface } from './errors.js';

interface HttpError extends Error {
  status?: number;
  expose?: boolean;
  type?: string;
}

/** Errors raised by the body parser and Koa itself (they carry an HTTP status) in our vocabulary. */
function fromHttpError(error: HttpError, surface: Surface): ApiError | undefined {
  if (error.status === 413) {
    return new ApiError(413, 'payload_too_large', 'The request body is larger than the 100 kB limit.', { param: 'body' });
  }
  if (error.status === 400 || error.status === 415 || error.status === 422) {
    const code = surface === 'read' ? 'invalid_parameter' : surface === 'oauth' ? 'invalid_request' : 'invalid_body';
    return new ApiError(400, code, 'The request body could not be parsed: send well-formed JSON (or a form, on OAuth endpoints).', { param: 'body' });
  }
  return undefined;
}

function toApiError(error: unknown, surface: Surface): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable(surface);
  if (error instanceof Error) return fromHttpError(error as HttpError, surface);
  return undefined;
}

export function errorHandler(): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const surface = surfaceOf(ctx.path);
      const apiError =
        toApiError(error, surface) ?? new ApiError(500, surface === 'oauth' ? 'server_error' : 'internal_error', 'An unexpected error occurred.');
      if (apiError.status >= 500) ctx.state.log.error({ err: error }, 'request failed');
      ctx.status = apiError.status;
      for (const [name, value] of Object.entries(apiError.options.headers ?? {})) ctx.set(name, value);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = renderError(apiError, surface);
    }
  };
}
