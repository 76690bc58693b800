// The in-memory limiter forgets the least recently seen key past its bound, so a flood of distinct addresses cannot
// grow the heap without end.
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/http/context.js';
import { createRateLimiter } from '../../src/http/rate-limit.js';

function remainingAfter(limiter: ReturnType<typeof createRateLimiter>, key: string): Promise<string> {
  const headers: Record<string, string> = {};
  // The limiter writes its headers to the request's header list (flat header writes on the one path).
  const ctx = {
    state: { headers: { set: (name: string, value: string) => (headers[name] = value) } },
  } as unknown as AppContext;
  return limiter.consume(ctx, key).then(() => headers['RateLimit-Remaining']!);
}

describe('in-memory rate limiter', () => {
  it('keeps at most its bound of keys, evicting the least recently counted', async () => {
    const limiter = createRateLimiter({
      limit: 5,
      windowSeconds: 60,
      keyPrefix: 'rl',
      unit: 'requests per minute',
      maxMemoryKeys: 2,
    });
    expect(await remainingAfter(limiter, 'a')).toBe('4');
    expect(await remainingAfter(limiter, 'b')).toBe('4');
    expect(await remainingAfter(limiter, 'a')).toBe('3');
    expect(await remainingAfter(limiter, 'c')).toBe('4'); // evicts b, the least recently counted
    expect(await remainingAfter(limiter, 'a')).toBe('2');
    expect(await remainingAfter(limiter, 'b')).toBe('4'); // forgotten: counted afresh
  });
});
