// The one door. Every request enters this Koa application and takes one path: what every request gets (a request id
// and its one log line, the security headers, `no-store` unless a step says otherwise, `Connection: close` while
// draining), kept as one flat list of headers (src/http/response-headers.ts), then the pipeline its route compiled at
// start (src/http/routes.ts), which ends in the route's handler. Its answer is written here, with the list, in one write.
// Nothing is answered before or beside it.
import type { RequestListener } from 'node:http';
import Koa from 'koa';
import type { AppContext, AppState } from './context.js';
import { logRequest, RequestState, requestIdOf } from './request-context.js';
import { compileRoutes, type RouteParts } from './routes.js';
import { keepHeadersInList, ResponseHeaders } from './response-headers.js';
import { SECURITY_HEADERS } from './security-headers.js';
import type { RequestSpan } from '../tracing.js';

/** What every response carries after its X-Request-Id, unless a step says otherwise. */
const FIXED_HEADERS: readonly string[] = [...SECURITY_HEADERS.flat(), 'Cache-Control', 'no-store'];

function createApp(parts: RouteParts): Koa<AppState> {
  const { deps } = parts;
  const { log, lifecycle } = deps;
  // Behind N trusted proxies the client address is the Nth X-Forwarded-For entry from the right: entries further left
  // were written by the client and prove nothing.
  const hops = deps.config.trustedProxyHops;
  const app = new Koa<AppState>({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are logged once, by each surface's error step
  keepHeadersInList(app);
  const route = compileRoutes(parts);
  // With tracing on, the request runs inside its server span (child of the caller's traceparent), named by its route
  // template once it is answered; its id is the request id when the caller sent none.
  const { tracing, metrics } = deps;
  // Written with `then` rather than async and await: each promise less is one less on every request (and, with
  // tracing on, one less for the async hooks that carry the active span to see).
  const serve = (ctx: AppContext, span?: RequestSpan): Promise<void> => {
    const started = performance.now();
    if (metrics) metrics.inFlight++;
    // Node's own header map, not Koa's \`get\`, which lower-cases the name on every call.
    const requestId = requestIdOf(ctx.req.headers['x-request-id'], span?.traceId);
    const headers = new ResponseHeaders(ctx.res, ['X-Request-Id', requestId, ...FIXED_HEADERS]);
    ctx.state = new RequestState(log, requestId, headers);
    const ended = (failed: boolean, error: unknown) => {
      // Set last, after any error rendering, so every response of the drain carries it.
      if (lifecycle.draining) headers.set('Connection', 'close');
      // An answer is written here with the list; a stream, a HEAD or an error no step rendered is Koa's to write.
      if (failed) headers.flush();
      else headers.finish(ctx);
      // An error no step rendered is answered 500 by Koa, after this.
      const status = failed ? 500 : ctx.status;
      if (metrics) {
        metrics.inFlight--;
        ctx.state.route?.recorder?.end(ctx.method, status, started);
      }
      logRequest(log, requestId, ctx, status, started);
      span?.finish({
        route: ctx.state.route?.template,
        operationId: ctx.state.route?.operationId,
        path: ctx.path,
        status,
        rateLimited: ctx.status === 429,
        replayed: ctx.response.get('Idempotent-Replayed') === 'true',
        drained: lifecycle.draining,
        error,
      });
    };
    let routed: Promise<void>;
    try {
      routed = route(ctx);
    } catch (error) {
      routed = Promise.reject(error);
    }
    return routed.then(
      () => ended(false, undefined),
      (error: unknown) => {
        ended(true, error);
        throw error;
      },
    );
  };
  app.use((ctx) => {
    if (!tracing) return serve(ctx);
    const span = tracing.startRequest(ctx.method, ctx.req.headers);
    return tracing.within(span, () => serve(ctx, span));
  });
  return app;
}

/** The HTTP server's request listener: the one Koa application. */
export function createRequestListener(parts: RouteParts): RequestListener {
  return createApp(parts).callback();
}
