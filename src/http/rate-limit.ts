// Rate limiting with rate-limiter-flexible: in memory by default, in Redis when REDIS_URL is set so every instance
// shares one count. If Redis is unreachable the in-memory limiter takes over (insuranceLimiter); requests never fail
// because the limiter's store is down, and a Redis that stalls counts as down once a command passes its timeout
// (REDIS_COMMAND_TIMEOUT_MS, set on the client in src/service.ts).
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AppContext, AppMiddleware } from './context.js';
import { RateLimited } from '../domain/errors.js';
import { isDecodable } from './errors.js';

const WINDOW_SECONDS = 60;
/**
 * Keys counted in memory at most. Each costs about 500 bytes, so a flood of distinct addresses (IPv6 hands out
 * plenty) stays near 25 MB instead of growing the heap to its cap; past it the least recently seen key is forgotten.
 */
const MEMORY_KEYS = 50_000;

interface MemoryRecord {
  timeoutId: NodeJS.Timeout | null;
}

/**
 * rate-limiter-flexible's memory store keeps every key in a Map until its window ends, with no upper bound. It has no
 * option for one, so its Map is swapped for an LRU of the same interface; the check makes a library upgrade that
 * changes the store fail at start rather than silently unbound it again.
 */
function boundedMemoryLimiter(limit: number, maxKeys: number): RateLimiterMemory {
  const limiter = new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS, keyPrefix: 'rl' });
  const store = (limiter as unknown as { _memoryStorage?: { _storage?: unknown } })._memoryStorage;
  if (!(store?._storage instanceof Map)) throw new Error('rate-limiter-flexible: unexpected memory store layout');
  // An evicted record's expiry timer would otherwise keep it reachable until the window ends.
  store._storage = new LRUCache<string, MemoryRecord>({ max: maxKeys, dispose: (record) => clearTimeout(record.timeoutId ?? undefined) });
  return limiter;
}

export interface RateLimiter {
  readonly limit: number;
  /** Counts one request against `key`, sets the RateLimit-* headers, and throws 429 when the key is over its limit. */
  consume(ctx: AppContext, key: string): Promise<void>;
}

export function createRateLimiter(limit: number, redis?: Redis, maxMemoryKeys = MEMORY_KEYS): RateLimiter {
  const memory = boundedMemoryLimiter(limit, maxMemoryKeys);
  const store: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points: limit,
        duration: WINDOW_SECONDS,
        keyPrefix: 'storefront:rl',
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory,
      })
    : memory;

  function setHeaders(ctx: AppContext, result: RateLimiterRes): number {
    const reset = Math.max(0, Math.ceil(result.msBeforeNext / 1000));
    ctx.set('RateLimit-Limit', String(limit));
    ctx.set('RateLimit-Remaining', String(Math.max(0, result.remainingPoints)));
    ctx.set('RateLimit-Reset', String(reset));
    return reset;
  }

  return {
    limit,
    async consume(ctx, key) {
      try {
        setHeaders(ctx, await store.consume(key));
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const retryAfter = Math.max(1, setHeaders(ctx, rejection));
        throw new RateLimited(limit, retryAfter);
      }
    },
  };
}

/**
 * Counts every request by client address; authenticated /agent requests are counted by client instead, after
 * authentication. The liveness probe is not counted: it must answer however busy the address of the balancer is, and
 * without touching Redis.
 */
export function rateLimitByAddress(limiter: RateLimiter): AppMiddleware {
  return async (ctx, next) => {
    if (ctx.path !== '/healthz' && !isBearerAgentRequest(ctx)) await limiter.consume(ctx, `ip:${ctx.ip}`);
    await next();
  };
}

/** A request the agent security handler will count per client (it reaches routing: its path can be decoded). */
export function isBearerAgentRequest(ctx: AppContext): boolean {
  return /^\/agent(\/|$)/.test(ctx.path) && /^Bearer\s+\S/i.test(ctx.get('Authorization')) && isDecodable(ctx.path);
}
