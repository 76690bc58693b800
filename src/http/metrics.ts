// The request metrics step (src/metrics.ts): the first step of every compiled pipeline when metrics are kept, outside
// the surface's error rendering, so it sees the status each request is answered with. Its labels are the route's, fixed
// when the route is compiled (src/http/routes.ts): the template the router matched, or `unmatched`.
import type { RouteRecorder } from '../metrics.js';
import type { AppMiddleware } from './context.js';

/** The `http_route` of a request no route serves (a bounded label, whatever the path). */
export const UNMATCHED_ROUTE = 'unmatched';

export function observeRequests(recorder: RouteRecorder): AppMiddleware {
  // An error no step rendered is answered 500 by Koa, after this step.
  return (ctx, next) => {
    const started = recorder.start();
    return next().then(
      () => recorder.end(ctx.method, ctx.status, started),
      (error: unknown) => {
        recorder.end(ctx.method, 500, started);
        throw error;
      },
    );
  };
}
