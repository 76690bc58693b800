// Caching of read responses. At the edge: `Cache-Control: public, max-age=60`, a weak ETag, 304 on a matching
// If-None-Match. In the process: the serialized representation of each read (60 s, bounded), so repeated reads
// touch neither the database nor the serializer, and are still served while the database is briefly away.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { AppContext, AppMiddleware } from './context.js';

export const PUBLIC_CACHE_CONTROL = 'public, max-age=60';
const READ_CACHE_TTL_MS = 60_000;
const READ_CACHE_MAX_ENTRIES = 1_000;

export interface Representation {
  payload: string | Buffer;
  etag: string;
  contentType: string;
}

export type ReadCache = LRUCache<string, Representation, () => Promise<unknown>>;

function weakEtag(payload: string | Buffer): string {
  return `W/"${createHash('sha1').update(payload).digest('base64url').slice(0, 27)}"`;
}

function matches(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

export function representationOf(body: unknown, contentType = 'application/json; charset=utf-8'): Representation {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return { payload, etag: weakEtag(payload), contentType };
}

/** Sends a cacheable representation with Cache-Control and ETag, or 304 when If-None-Match matches. */
export function sendRepresentation(ctx: AppContext, representation: Representation): void {
  ctx.set('Cache-Control', PUBLIC_CACHE_CONTROL);
  ctx.set('ETag', representation.etag);
  const ifNoneMatch = ctx.get('If-None-Match');
  if (ifNoneMatch && matches(ifNoneMatch, representation.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  ctx.type = representation.contentType;
  ctx.body = representation.payload;
}

export function sendCacheable(ctx: AppContext, body: unknown, contentType?: string): void {
  sendRepresentation(ctx, representationOf(body, contentType));
}

export function createReadCache(): ReadCache {
  return new LRUCache<string, Representation, () => Promise<unknown>>({
    max: READ_CACHE_MAX_ENTRIES,
    ttl: READ_CACHE_TTL_MS,
    // Concurrent misses for one key share a single load; failures are not cached.
    fetchMethod: async (_key, _stale, { context: load }) => representationOf(await load()),
  });
}

function readCacheKey(ctx: AppContext): string {
  return `${ctx.path}?${ctx.querystring}`;
}

/** Serves a read from the in-process cache (keyed by path and query), loading it on a miss. */
export async function sendCachedRead(ctx: AppContext, cache: ReadCache, load: () => Promise<unknown>): Promise<void> {
  const representation = await cache.fetch(readCacheKey(ctx), { context: load });
  sendRepresentation(ctx, representation!);
}

/**
 * Answers a GET whose exact path and query produced a cached representation in the last 60 s, before routing: that
 * request was already validated and answered, so it is answered again like an edge cache would. Everything before
 * this middleware (rate limits, CORS, retirement notices) still applies.
 */
export function serveCachedReads(cache: ReadCache): AppMiddleware {
  return async (ctx, next) => {
    const hit = ctx.method === 'GET' || ctx.method === 'HEAD' ? cache.get(readCacheKey(ctx)) : undefined;
    if (hit) return sendRepresentation(ctx, hit);
    await next();
  };
}

/** Everything not explicitly cacheable is `no-store`: checkout, OAuth, agent and error responses are never cached. */
export function noStoreByDefault(): AppMiddleware {
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
