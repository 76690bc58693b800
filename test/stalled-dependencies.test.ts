// Dependencies that stop answering without closing their connections (a frozen Redis, a proxy or NAT that silently
// lost the flow), which is worse than a dependency that is down: without timeouts every request waits on them.
// Redis: commands time out and the request is counted in memory and answered. PostgreSQL: queries time out, the
// stalled connections are destroyed and replaced, and the service recovers by itself while the old sockets stay stuck.
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverUrl } from './support/database.js';
import { proxied, startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import { startTestService, type TestService } from './support/service.js';
import type { TcpProxy } from './support/tcp-proxy.js';

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;
const freshClient = () => ({ 'X-Forwarded-For': `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` });
/** A generous bound: a request held by a stalled dependency never ends at all, so any finite wait tells them apart. */
const ANSWER_WITHIN_MS = 10_000;

describe.skipIf(!redisUrl)('with Redis stalled', () => {
  let api: TestService;
  let proxy: TcpProxy;
  beforeAll(async () => {
    const redis = await proxied(redisUrl!);
    proxy = redis.proxy;
    api = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '3', TRUST_PROXY: 'true', REDIS_URL: redis.url } });
    expect((await api.http('/api/store/regions', { headers: freshClient() })).headers.get('ratelimit-remaining')).toBe(
      '2',
    );
    proxy.stall();
  });
  afterAll(async () => {
    proxy?.resume();
    await api?.close();
    await proxy?.close();
  });

  it('answers every request, counting in memory, and the liveness probe too', async () => {
    const statuses = await Promise.all(
      Array.from(
        { length: 20 },
        async () =>
          (
            await api.http('/api/store/regions', {
              headers: freshClient(),
              signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
            })
          ).status,
      ),
    );
    expect(statuses).toEqual(Array(20).fill(200));
    expect((await api.http('/healthz', { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) })).status).toBe(200);

    const client = freshClient();
    const counted = [];
    for (let i = 0; i < 4; i++)
      counted.push(
        (await api.http('/api/store/collections', { headers: client, signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }))
          .status,
      );
    expect(counted).toEqual([200, 200, 200, 429]);
  });
});

/** A checkout create through the proxied service, given at most ANSWER_WITHIN_MS to answer. */
const createThrough = (outage: ServiceBehindProxy) =>
  outage.api.http('/checkout_sessions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });

describe.skipIf(!serverUrl)('with PostgreSQL connections stalled', () => {
  let outage: ServiceBehindProxy;
  beforeAll(async () => {
    outage = await startServiceBehindProxy({ DATABASE_STATEMENT_TIMEOUT_MS: '500' });
  });
  afterAll(async () => {
    outage?.proxy.resume();
    await outage?.close();
  });

  const create = () => createThrough(outage);

  it('times the stalled queries out, replaces the connections and recovers without the sockets being reset', async () => {
    // Open several pooled connections, then freeze every one of them (new connections still get through).
    expect(await Promise.all(Array.from({ length: 6 }, async () => (await create()).status))).toEqual(
      Array(6).fill(201),
    );
    outage.proxy.stall();

    const during = await create();
    expect([201, 503]).toContain(during.status);
    expect((await outage.api.http('/healthz', { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) })).status).toBe(200);

    await expect.poll(async () => (await create()).status, { timeout: 60_000, interval: 200 }).toBe(201);
    await expect
      .poll(async () => (await outage.api.http('/readyz', { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) })).status, {
        timeout: 60_000,
      })
      .toBe(200);
  });
});

describe.skipIf(!serverUrl)('with the PostgreSQL host frozen (new connections stall too)', () => {
  let outage: ServiceBehindProxy;
  beforeAll(async () => {
    outage = await startServiceBehindProxy({ DATABASE_STATEMENT_TIMEOUT_MS: '500' });
  });
  afterAll(async () => {
    outage?.proxy.resume();
    await outage?.close();
  });

  /** A read that misses the cache (each `limit` a read of its own), so it needs a connection. */
  const read = (limit: number) =>
    outage.api.http(`/api/store/products?limit=${limit}`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
  const create = () => createThrough(outage);

  it('answers unavailable with Retry-After while the pool is exhausted and connecting times out, never 500', async () => {
    expect((await create()).status).toBe(201);
    outage.proxy.freeze();
    // More requests than the pool has connections (10), in waves: each new connection waits for a greeting that never
    // comes, and node-postgres's connect timeout ("timeout expired") reaches a request waiting for a connection.
    // Each surface says so in its documented way: the catalogue 502 catalog_unavailable, checkout 503.
    const expected: number[] = [];
    const answers: Response[] = [];
    for (let wave = 0; wave < 3; wave++) {
      const sent = Array.from({ length: 16 }, (_, index) => {
        expected.push(index % 2 ? 503 : 502);
        return index % 2 ? create() : read(1 + wave * 16 + index);
      });
      answers.push(...(await Promise.all(sent)));
    }
    expect(answers.map((answer) => answer.status)).toEqual(expected);
    expect(answers.filter((answer) => !answer.headers.has('retry-after'))).toEqual([]);
    outage.proxy.resume();
    await expect.poll(async () => (await create()).status, { timeout: 60_000, interval: 200 }).toBe(201);
  });
});
