// Rate limiting with rate-limiter-flexible: in memory by default, in Redis when REDIS_URL is set so every instance
// shares one count. If Redis is unreachable the in-memory limiter takes over (insuranceLimiter); requests never fail
// because the limiter's store is down, and a Redis that stalls counts as down once a command passes its timeout
// (REDIS_COMMAND_TIMEOUT_MS, set on the client in src/service.ts). Which keys a request is counted against is decided
// by the steps below, each named in the pipelines of src/http/surfaces.ts.
import type { Redis } from 'ioredis';
import type { Metrics } from '../metrics.js';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { RateLimited } from '../domain/errors.js';
import type { LimitCount, LimitCounter } from '../ports.js';
import type { AppContext, AppMiddleware } from './context.js';
import { renderError } from './errors.js';

/**
 * Keys counted in memory at most. Each costs about 500 bytes, so a flood of distinct addresses (IPv6 hands out
 * plenty) stays near 25 MB instead of growing the heap to its cap; past it the least recently seen key is forgotten.
 */
const MEMORY_KEYS = 50_000;

interface MemoryRecord {
  timeoutId: NodeJS.Timeout | null;
}

export interface LimitOptions {
  /** How many requests a key may make per window. */
  limit: number;
  windowSeconds: number;
  /** Keeps the counts of different limits apart in a shared store. */
  keyPrefix: string;
  /** What is counted, for the 429's message: "requests per minute", "registrations per hour". */
  unit: string;
  /** Keys the in-memory store keeps at most. */
  maxMemoryKeys?: number;
}

/**
 * rate-limiter-flexible's memory store keeps every key in a Map until its window ends, with no upper bound. It has no
 * option for one, so its Map is swapped for an LRU of the same interface; the check makes a library upgrade that
 * changes the store fail at start rather than silently unbound it again.
 */
function boundedMemoryLimiter({
  limit,
  windowSeconds,
  keyPrefix,
  maxMemoryKeys = MEMORY_KEYS,
}: LimitOptions): RateLimiterMemory {
  const limiter = new RateLimiterMemory({ points: limit, duration: windowSeconds, keyPrefix });
  const store = (limiter as unknown as { _memoryStorage?: { _storage?: unknown } })._memoryStorage;
  if (!(store?._storage instanceof Map)) throw new Error('rate-limiter-flexible: unexpected memory store layout');
  // An evicted record's expiry timer would otherwise keep it reachable until the window ends.
  store._storage = new LRUCache<string, MemoryRecord>({
    max: maxMemoryKeys,
    dispose: (record) => clearTimeout(record.timeoutId ?? undefined),
  });
  return limiter;
}

/** The counter (src/ports.ts) with the step a request takes through it. */
export interface RateLimiter extends LimitCounter {
  /** Counts, sets the RateLimit-* headers (in the request's header list), and throws RateLimited when any key is over its limit. */
  consume(ctx: AppContext, ...keys: string[]): Promise<void>;
}

/**
 * The in-memory limiter Redis falls back to, counting each use in the metrics (`storefront_redis_fallbacks_total`):
 * rate-limiter-flexible calls its insurance limiter only when a Redis command failed or Redis was not ready.
 */
function countedFallback(memory: RateLimiterMemory, counted: () => void): RateLimiterMemory {
  const fallback = Object.create(memory) as RateLimiterMemory;
  fallback.consume = (...args) => {
    counted();
    return memory.consume(...args);
  };
  fallback.get = (...args) => {
    counted();
    return memory.get(...args);
  };
  return fallback;
}

/** `metrics`: where the limiter's falls back to memory are counted, when metrics are kept. */
export function createRateLimiter(options: LimitOptions, redis?: Redis, metrics?: Metrics): RateLimiter {
  const { limit, windowSeconds, keyPrefix, unit } = options;
  const memory = boundedMemoryLimiter(options);
  const fallbacks = metrics?.redisFallbacks.labels(keyPrefix);
  const store: RateLimiterAbstract = redis
    ? new RateLimiterRedis({
        storeClient: redis,
        points: limit,
        duration: windowSeconds,
        keyPrefix: `storefront:${keyPrefix}`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: fallbacks ? countedFallback(memory, () => fallbacks.inc()) : memory,
      })
    : memory;
  const limitText = String(limit);
  const limitHeader: [string, string] = ['RateLimit-Limit', limitText];

  /** Seconds before the most constrained key's window ends (RateLimit-Reset). */
  const resetOf = (tightest: RateLimiterRes) => Math.max(0, Math.ceil(tightest.msBeforeNext / 1000));
  const rejectionOf = (reset: number) =>
    new RateLimited(`Rate limit of ${limit} ${unit} exceeded.`, Math.max(1, reset));

  /** The headers and rejection of the most constrained key's count. */
  function limitCount(tightest: RateLimiterRes, over: boolean): LimitCount {
    const reset = resetOf(tightest);
    return {
      headers: [
        limitHeader,
        ['RateLimit-Remaining', String(Math.max(0, tightest.remainingPoints))],
        ['RateLimit-Reset', String(reset)],
      ],
      rejection: over ? rejectionOf(reset) : undefined,
    };
  }

  /**
   * What `limitCount` says, set straight in the request's header list (and the rejection thrown): every public request
   * takes this, and the LimitCount's arrays in between were a visible share of a cached read.
   */
  function settle(ctx: AppContext, tightest: RateLimiterRes, over: boolean): void {
    const list = ctx.state.headers;
    const reset = resetOf(tightest);
    list.set('RateLimit-Limit', limitText);
    list.set('RateLimit-Remaining', String(Math.max(0, tightest.remainingPoints)));
    list.set('RateLimit-Reset', String(reset));
    if (over) throw rejectionOf(reset);
  }

  // A key over its limit rejects with its RateLimiterRes; anything else is the store failing.
  const countOne = (key: string) =>
    store.consume(key).then(
      (result) => ({ result, over: false }),
      (reason: unknown) => {
        if (reason instanceof RateLimiterRes) return { result: reason, over: true };
        throw reason;
      },
    );

  /** Every key counted; the most constrained key's count, and whether any key is over its limit. */
  const countAll = (keys: string[]) =>
    Promise.all(keys.map(countOne)).then((outcomes) => ({
      tightest: outcomes.reduce((least, outcome) =>
        outcome.result.remainingPoints < least.result.remainingPoints ? outcome : least,
      ).result,
      over: outcomes.some((outcome) => outcome.over),
    }));

  function count(...keys: string[]): Promise<LimitCount> {
    return countAll(keys).then(({ tightest, over }) => limitCount(tightest, over));
  }

  async function check(key: string): Promise<LimitCount> {
    const used = await store.get(key);
    // Nothing used: no window is running, so none has to end before the whole budget is there.
    if (!used)
      return {
        headers: [limitHeader, ['RateLimit-Remaining', String(limit)], ['RateLimit-Reset', '0']],
        rejection: undefined,
      };
    return limitCount(used, used.consumedPoints >= limit);
  }

  return {
    limit,
    count,
    check,
    consume(ctx, ...keys) {
      // One key (every public request) skips Promise.all and the reduce: with the rest they were a visible share of one.
      if (keys.length === 1)
        return store.consume(keys[0]!).then(
          (result) => settle(ctx, result, false),
          (reason: unknown) => {
            if (reason instanceof RateLimiterRes) return settle(ctx, reason, true);
            throw reason;
          },
        );
      return countAll(keys).then(({ tightest, over }) => settle(ctx, tightest, over));
    },
  };
}

/** The key that counts a request against its client's address (Koa's `ctx.ip`, which honours TRUST_PROXY). */
export const addressKey = (ip: string) => `ip:${ip}`;
const byAddress = (ctx: AppContext) => addressKey(ctx.ip);

/** Counts the request against the client's address (its headers kept in the flat list). */
export function limitByAddress(limiter: RateLimiter): AppMiddleware {
  return (ctx, next) => limiter.consume(ctx, byAddress(ctx)).then(() => next());
}

/**
 * Counts an agent request against its address and, when its bearer token resolved to a grant (resolveBearer), against
 * that client too: registering more clients does not multiply what one address may send.
 */
export function limitByAddressAndClient(limiter: RateLimiter): AppMiddleware {
  return async (ctx, next) => {
    const { grant } = ctx.state;
    await (grant
      ? limiter.consume(ctx, byAddress(ctx), `client:${grant.clientId}`)
      : limiter.consume(ctx, byAddress(ctx)));
    await next();
  };
}

/**
 * The payment processor's webhook: its signature is its authentication, so it does not share the anonymous budget of
 * its address (a processor sends from a few addresses, which would be throttled at peak). Only requests it refuses
 * (a forged or unsigned event, a malformed body: 4xx) are counted, against the address's own budget of refusals; an
 * address that has spent it is refused with 429 before its body is read or verified, so a forged request costs at
 * most one body read and one HMAC, a bounded number of times per minute.
 */
export function limitWebhookRefusals(limiter: RateLimiter): AppMiddleware {
  return async (ctx, next) => {
    const key = `webhook:${ctx.ip}`;
    const before = await limiter.check(key);
    for (const [name, value] of before.headers) ctx.set(name, value);
    if (before.rejection) throw before.rejection;
    try {
      await next();
    } catch (error) {
      const { status } = renderError(error, 'read');
      if (status >= 400 && status < 500) {
        const { headers } = await limiter.count(key);
        for (const [name, value] of headers) ctx.set(name, value);
      }
      throw error;
    }
  };
}

/** Registrations per address, on their own (slower) budget: each one stores a client. */
export function limitRegistrations(limiter: RateLimiter): AppMiddleware {
  return async (ctx, next) => {
    await limiter.consume(ctx, `register:${ctx.ip}`);
    await next();
  };
}
