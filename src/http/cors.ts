// CORS for the public surfaces (catalogue, checkout, changelog): any origin may read them from a browser, without
// credentials. The OAuth and agent surfaces are for server-side clients and send no CORS headers.
import cors from '@koa/cors';
import type { AppMiddleware } from './context.js';

const EXPOSED = [
  'ETag',
  'API-Version',
  'Idempotent-Replayed',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'X-Request-Id',
  'Deprecation',
  'Sunset',
  'Link',
];
// W3C Trace Context too, so that a traced browser client's requests join its trace.
const ALLOWED = [
  'Content-Type',
  'Idempotency-Key',
  'API-Version',
  'If-None-Match',
  'X-Request-Id',
  'traceparent',
  'tracestate',
];

export function publicCors(): AppMiddleware {
  const preflights = cors({
    origin: '*',
    allowMethods: ['GET', 'HEAD', 'POST'],
    allowHeaders: ALLOWED,
    exposeHeaders: EXPOSED,
    maxAge: 600,
    keepHeadersOnError: true,
  }) as unknown as AppMiddleware;
  const exposed = EXPOSED.join(',');
  // Any other request gets what @koa/cors sets with `origin: '*'` (its errors are rendered before it, by the surface's
  // first step), written directly, in the request's header list (src/http/response-headers.ts): on every public
  // answer, @koa/cors' own work was a measurable part of a cached read. A preflight is @koa/cors'.
  return (ctx, next) => {
    if (ctx.method === 'OPTIONS') return preflights(ctx, next);
    const { headers } = ctx.state;
    // Vary is a list: one an earlier step began is extended, as Koa's vary would.
    if (headers.has('Vary')) headers.vary('Origin');
    else headers.set('Vary', 'Origin');
    headers.set('Access-Control-Allow-Origin', '*');
    headers.set('Access-Control-Expose-Headers', exposed);
    return next();
  };
}
