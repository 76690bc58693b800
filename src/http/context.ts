// What every request carries through the middleware chain.
import type Koa from 'koa';
import type { Logger } from '../log.js';

export interface AppState {
  requestId: string;
  log: Logger;
  /** The OAuth client the request authenticated as, when it did (used to key rate limits). */
  clientId?: string;
  /** Why the body could not be read (too large, malformed, too deep), reported after routing and authentication. */
  bodyError?: unknown;
}

export type AppContext = Koa.ParameterizedContext<AppState>;
export type AppMiddleware = Koa.Middleware<AppState>;
