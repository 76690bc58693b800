// The one place errors become responses: every thrown error is rendered in the documented shape of the surface the
// path belongs to. Unexpected errors are logged and answered without internals.
import { isDatabaseUnavailable, isRejectedInput } from '../db/knex.js';
import type { AppMiddleware } from './context.js';
import { ApiError, badRequestCode, databaseUnavailable, renderError, surfaceOf, type Surface } from './errors.js';
import { DEFAULT_API_VERSION } from './versioning.js';

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
    return new ApiError(400, badRequestCode(surface, 'invalid_body'), 'The request body could not be parsed: send well-formed JSON (or a form, on OAuth endpoints).', { param: 'body' });
  }
  return undefined;
}

function toApiError(error: unknown, surface: Surface): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable(surface);
  // A safety net behind the contract's patterns: a value the database cannot even compare is the request's fault.
  if (isRejectedInput(error)) return new ApiError(400, badRequestCode(surface, 'invalid_field'), 'A value in the request contains characters or numbers that are not accepted.');
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
      // Every checkout response names the version applied, even one that failed before the version was read.
      if (surface === 'checkout' && !ctx.response.get('API-Version')) ctx.set('API-Version', DEFAULT_API_VERSION);
      ctx.body = renderError(apiError, surface);
    }
  };
}
