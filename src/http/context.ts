// What every request carries through the middleware chain.
import type Koa from 'koa';
import type { Logger } from '../log.js';
import type { RouteRecorder } from '../metrics.js';
import type { Grant } from '../services/oauth.js';
import type { ResponseHeaders } from './response-headers.js';

export interface AppState {
  requestId: string;
  log: Logger;
  /** The response's headers, one list until written, which Koa's response reads and writes (src/http/response-headers.ts). */
  headers: ResponseHeaders;
  /** What the request's bearer token grants, when it is valid (resolveBearer, on the agent surface). */
  grant?: Grant;
  /** Why the bearer token could not be looked up; reported once routing found a protected operation. */
  bearerFailure?: unknown;
  /** The route that answers the request, as compiled (src/http/routes.ts): for its span and its log. */
  route?: MatchedRoute;
  /** The route's path parameters, percent-decoded (src/http/routes.ts). */
  params?: Record<string, string>;
  /** Why the body could not be read (too large, malformed, too deep), reported after routing and authentication. */
  bodyError?: unknown;
}

/**
 * A compiled route: its path template (undefined for a path no route serves), its operation, if it has one, and, when
 * metrics are kept, the recorder of its request durations (labelled with the template, or `unmatched`).
 */
export interface MatchedRoute {
  template: string | undefined;
  operationId: string | undefined;
  recorder: RouteRecorder | undefined;
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;

declare module 'koa' {
  interface Request {
    /** The body as the body step read it (src/http/body.ts): parsed JSON or form fields, `{}` when none was read. */
    body?: unknown;
    /** The body's text as sent, for a processor's signature (src/http/body.ts). */
    rawBody?: string;
  }
}
