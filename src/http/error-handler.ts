// The first step of every surface's pipeline (src/http/surfaces.ts): whatever the later steps throw is rendered in the
// surface's documented error shape (src/http/errors.ts). Unexpected errors are logged and answered without internals.
import { isDatabaseUnavailable, isRejectedInput } from '../db/knex.js';
import { BadRequest, DomainError, PayloadTooLarge, SurfaceError, Unavailable } from '../domain/errors.js';
import type { AppMiddleware } from './context.js';
import { renderError, type ErrorShape, type RenderedError } from './errors.js';
import type { Logger } from '../log.js';
import { DEFAULT_API_VERSION } from './versioning.js';

interface HttpError extends Error {
  status?: number;
}

/** Errors raised by the body parser, Koa and the database driver, in the service's vocabulary. */
function asDomainError(error: unknown): unknown {
  // Another surface's own error (a protocol's, JSON-RPC's) is unexpected here, whatever status it carries.
  if (error instanceof DomainError || error instanceof SurfaceError) return error;
  if (isDatabaseUnavailable(error)) return new Unavailable();
  // A safety net behind the contract's patterns: a value the database cannot even compare is the request's fault.
  if (isRejectedInput(error))
    return new BadRequest(
      'invalid_field',
      'A value in the request contains characters or numbers that are not accepted.',
    );
  const status = error instanceof Error ? (error as HttpError).status : undefined;
  if (status === 413)
    return new PayloadTooLarge('The request body is larger than the 100 kB limit.', { param: 'body' });
  if (status === 400 || status === 415 || status === 422) {
    return new BadRequest(
      'invalid_body',
      'The request body could not be parsed: send well-formed JSON (or a form, on OAuth endpoints).',
      { param: 'body' },
    );
  }
  return error;
}

/**
 * Whatever a step threw, as the surface's documented error, with every header a failure carries: its own, `no-store`,
 * and on checkout the API version applied (`appliedVersion`, or the current one when the request failed before its
 * version was resolved: every checkout response names one). An unexpected error is logged with the request's id.
 */
export function renderFailure(
  error: unknown,
  shape: ErrorShape,
  log: () => Logger,
  appliedVersion: string | undefined,
): RenderedError {
  const rendered = renderError(asDomainError(error), shape);
  if (rendered.status >= 500) log().error({ err: error }, 'request failed');
  rendered.headers['Cache-Control'] = 'no-store';
  if (shape === 'checkout' && !appliedVersion) rendered.headers['API-Version'] = DEFAULT_API_VERSION;
  return rendered;
}

export function renderErrorsAs(shape: ErrorShape): AppMiddleware {
  // A `then` rather than an async function's `await`: one promise fewer on every request.
  return (ctx, next) =>
    next().then(undefined, (error: unknown) => {
      const rendered = renderFailure(error, shape, () => ctx.state.log, ctx.response.get('API-Version'));
      ctx.status = rendered.status;
      for (const [name, value] of Object.entries(rendered.headers)) ctx.set(name, value);
      ctx.body = rendered.body;
    });
}
