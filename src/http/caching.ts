// Edge caching of read responses: 60 s public caching, a weak ETag over the body, and 304 for a matching If-None-Match.
import { createHash } from 'node:crypto';
import type { AppContext, AppMiddleware } from './context.js';

export const PUBLIC_CACHE_CONTROL = 'public, max-age=60';

function weakEtag(payload: string): string {
  return `W/"${createHash('sha1').update(payload).digest('base64url').slice(0, 27)}"`;
}

function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

/** Sends a cacheable read response: JSON (or a prepared string) with Cache-Control, ETag, and 304 on a match. */
export function sendCacheable(ctx: AppContext, body: unknown, contentType = 'application/json; charset=utf-8'): void {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const etag = weakEtag(payload);
  ctx.set('Cache-Control', PUBLIC_CACHE_CONTROL);
  ctx.set('ETag', etag);
  const ifNoneMatch = ctx.get('If-None-Match');
  if (ifNoneMatch && matches(ifNoneMatch, etag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = contentType;
  ctx.body = payload;
}

/** Everything not explicitly cacheable is `no-store`: checkout, OAuth, agent and error responses are never cached. */
export function noStoreByDefault(): AppMiddleware {
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
