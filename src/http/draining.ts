// Graceful shutdown as load balancers expect it. On SIGTERM the instance first drains: it keeps accepting and
// answering (a balancer may still route to it until its health checks notice), readiness answers 503, and every
// response carries `Connection: close` so keep-alive clients reconnect elsewhere. Only then does the listener close.
import type { Lifecycle } from '../ports.js';
import type { AppMiddleware } from './context.js';

export function closeConnectionsWhileDraining(lifecycle: Lifecycle): AppMiddleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      // Set last, after any error rendering, so every response of the drain carries it.
      if (lifecycle.draining) ctx.set('Connection', 'close');
    }
  };
}
