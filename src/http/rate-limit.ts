// Rate limiting with rate-limiter-flexible: in memory by default, in Redis when REDIS_URL is set so every instance
// shares one count. If Redis is unreachable the in-memory limiter takes over (insuranceLimiter); requests never fail
// because the limiter's store is down.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { AppContext, AppMiddleware } from './context.js';
import { RateLimited } from '../domain/errors.js';
import { isDecodable } from './errors.js';

const WINDOW_SECONDS = 60;

export interface RateLimiter {
  readonly limit: number;
  /** Counts one request against `key`, sets the RateLimit-* headers, and throws 429 when the key is over its limit. */
  consume(ctx: AppContext, key: string): Promise<void>;
}

export function createRateLimiter(limit: number, redis?: Redis): RateLimiter {
  const memory = new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS, keyPrefix: 'rl' });
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

/** Counts every request by client address; authenticated /agent requests are counted by client instead, after authentication. */
export function rateLimitByAddress(limiter: RateLimiter): AppMiddleware {
  return async (ctx, next) => {
    if (!isBearerAgentRequest(ctx)) await limiter.consume(ctx, `ip:${ctx.ip}`);
    await next();
  };
}

/** A request the agent security handler will count per client (it reaches routing: its path can be decoded). */
export function isBearerAgentRequest(ctx: AppContext): boolean {
  return /^\/agent(\/|$)/.test(ctx.path) && /^Bearer\s+\S/i.test(ctx.get('Authorization')) && isDecodable(ctx.path);
}
