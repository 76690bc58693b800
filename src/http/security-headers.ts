import type { AppMiddleware } from './context.js';

/** Defaults for every response; HTML pages set their own, looser Content-Security-Policy. */
export function securityHeaders(): AppMiddleware {
  return async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    await next();
  };
}
