// The request metrics step (src/metrics.ts): the first step of every compiled pipeline when metrics are kept, outside
// the surface's error rendering, so it sees the status each request is answered with. Its labels are the route's, fixed
// when the route is compiled (src/http/routes.ts): the template the router matched, or `unmatched`.
import type { RouteRecorder } from '../metrics.js';
import type { AppMiddleware } from './context.js';

/** The `http_route` of a request no route serves (a bounded label, whatever the path). */
export const UNMATCHED_ROUTE = 'unmatched';

export function observeRequests(recorder: RouteRecorder): AppMiddleware {
  return async (ctx, next) => {
    const started = recorder.start();
    // An error no step rendered is answered 500 by Koa, after this step.
    let escaped = false;
    try {
      await next();
    } catch (error) {
      escaped = true;
      throw error;
    } finally {
      recorder.end(ctx.method, escaped ? 500 : ctx.status, started);
    }
  };
}
