// Rate limits: headers on every response, 429 in each surface's shape, per-client keys from the right end of
// X-Forwarded-For, and one shared count across instances through Redis (falling back to memory when Redis is
// unreachable). The liveness probe is never counted.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;
const freshAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
/** A client address of its own per test (TRUST_PROXY honours X-Forwarded-For), so counts never leak between tests or runs. */
const freshClient = () => ({ 'X-Forwarded-For': freshAddress() });

describe('with a limit of 3 per minute', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'true' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('counts down in the headers and answers 429 with Retry-After on reads', async () => {
    const client = freshClient();
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      const response = await api.http('/api/store/regions', { headers: client });
      expect(response.headers.get('ratelimit-limit')).toBe('3');
      remaining.push(response.headers.get('ratelimit-remaining'));
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const limited = await api.http('/api/store/regions', { headers: client });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(limited.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    expect(((await limited.json()) as any).error.code).toBe('rate_limited');
  });

  it('answers 429 in the flat checkout shape and in the OAuth shape', async () => {
    const client = freshClient();
    for (let i = 0; i < 3; i++) await api.http('/readyz', { headers: client });
    const checkout = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { ...client, 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(checkout.status).toBe(429);
    expect(await checkout.json()).toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limited' });
    expect(checkout.headers.get('api-version')).toBe('2026-07-16');
    const oauth = await api.http('/.well-known/oauth-authorization-server', { headers: client });
    expect(oauth.status).toBe(429);
    expect(await oauth.json()).toMatchObject({ error: 'rate_limited' });
  });

  it('lets a browser read the 429: CORS headers come with it', async () => {
    const client = { ...freshClient(), Origin: 'https://shop.example' };
    for (let i = 0; i < 3; i++) await api.http('/api/store/regions', { headers: client });
    const limited = await api.http('/api/store/regions', { headers: client });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('access-control-allow-origin')).toBe('*');
    expect(limited.headers.get('access-control-expose-headers')).toContain('Retry-After');
  });

  it('counts bearer requests to /agent paths that cannot even be decoded', async () => {
    const client = { ...freshClient(), Authorization: 'Bearer sfat_not_a_token' };
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const response = await api.http('/agent/%ZZ', { headers: client });
      expect(response.headers.has('ratelimit-remaining')).toBe(true);
      statuses.push(response.status);
    }
    expect(statuses).toEqual([404, 404, 404, 429]);
  });

  it('keys by client address: another client is not limited', async () => {
    const first = freshClient();
    for (let i = 0; i < 4; i++) await api.http('/readyz', { headers: first });
    expect((await api.http('/readyz', { headers: first })).status).toBe(429);
    expect((await api.http('/readyz', { headers: freshClient() })).status).toBe(200);
  });

  it('takes the address the trusted proxy appended, not the ones the client wrote before it', async () => {
    const seenByBalancer = freshAddress();
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const spoofed = { 'X-Forwarded-For': `${freshAddress()}, ${freshAddress()}, ${seenByBalancer}` };
      statuses.push((await api.http('/api/store/regions', { headers: spoofed })).status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('never limits the liveness probe', async () => {
    const client = freshClient();
    for (let i = 0; i < 4; i++) await api.http('/readyz', { headers: client });
    const probe = await api.http('/healthz', { headers: client });
    expect(probe.status).toBe(200);
    expect(probe.headers.has('ratelimit-remaining')).toBe(false);
  });
});

describe('behind two trusted proxies (TRUST_PROXY=2)', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '2' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('keys by the second address from the right', async () => {
    const client = freshAddress();
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      // client-written, then the address the CDN saw (the client), then the address the balancer saw (a CDN node)
      const headers = { 'X-Forwarded-For': `${freshAddress()}, ${client}, ${freshAddress()}` };
      statuses.push((await api.http('/api/store/regions', { headers })).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
  });
});

describe('without TRUST_PROXY', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '2' } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('ignores X-Forwarded-For, so a client cannot dodge the limit by inventing addresses', async () => {
    for (let i = 0; i < 2; i++) await api.http('/readyz', { headers: freshClient() });
    expect((await api.http('/readyz', { headers: freshClient() })).status).toBe(429);
  });
});

describe.skipIf(!redisUrl)('shared through Redis', () => {
  let database: TestDatabase;
  let one: TestService;
  let two: TestService;
  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { RATE_LIMIT_PER_MINUTE: '4', TRUST_PROXY: 'true', REDIS_URL: redisUrl! };
    one = await startTestService({ env, database });
    two = await startTestService({ env, database });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await database?.drop();
  });

  it('counts requests to two instances as one', async () => {
    const client = freshClient();
    const statuses = [];
    for (const api of [one, two, one, two, one]) statuses.push((await api.http('/readyz', { headers: client })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });
});

describe('with Redis unreachable', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService({
      env: { RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'true', REDIS_URL: 'redis://127.0.0.1:1' },
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('falls back to counting in memory and never fails a request', async () => {
    const client = freshClient();
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await api.http('/api/store/collections', { headers: client })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });
});
