// The service when PostgreSQL cannot be reached: reads 502 catalog_unavailable, checkout 503 service_unavailable
// (a malformed body is still a 400), readiness 503; the process stays up and recovers by itself when the database
// returns. PostgreSQL only: an embedded PGlite lives in the process and cannot become unreachable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverUrl } from './support/database.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import type { TestService } from './support/service.js';
import type { TcpProxy } from './support/tcp-proxy.js';

describe.skipIf(!serverUrl)('with PostgreSQL unreachable', () => {
  let outage: ServiceBehindProxy;
  let proxy: TcpProxy;
  let api: TestService;

  beforeAll(async () => {
    outage = await startServiceBehindProxy();
    ({ api, proxy } = outage);
  });
  afterAll(async () => {
    await outage?.close();
  });

  it('answers 502 catalog_unavailable while the database is gone, then recovers', async () => {
    expect((await api.http('/api/store/regions')).status).toBe(200);
    await proxy.cut();

    // A read cached in the process in the last 60 s is still served; an uncached one reports the outage.
    const cached = await api.http('/api/store/regions');
    expect(cached.status).toBe(200);
    expect(((await cached.json()) as { regions: unknown[] }).regions).toHaveLength(5);

    const down = await api.http('/api/store/products?handle=tongue-scraper-2-pack');
    expect(down.status).toBe(502);
    expect(((await down.json()) as { error: { code: string } }).error.code).toBe('catalog_unavailable');
    expect(down.headers.get('retry-after')).toBe('5');
    const notReady = await api.http('/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.headers.get('retry-after')).toBe('5');
    expect((await api.http('/healthz')).status).toBe(200);

    const create = (body: string) =>
      api.http('/checkout_sessions', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
    const checkout = await create(JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }));
    expect(checkout.status).toBe(503);
    expect(await checkout.json()).toMatchObject({ type: 'service_unavailable', code: 'service_unavailable' });
    const malformed = await create('{"items": [');
    expect(malformed.status).toBe(400);
    const invalid = await create(JSON.stringify({ items: [{ id: 'variant_01tongue2pack', quantity: 0 }] }));
    expect(invalid.status).toBe(400);
    expect((await api.http('/checkout_sessions/cart_anything')).status).toBe(503);

    await proxy.restore();
    await expect
      .poll(async () => (await api.http('/api/store/products?handle=tongue-scraper-2-pack')).status, {
        timeout: 10_000,
      })
      .toBe(200);
    expect((await api.http('/readyz')).status).toBe(200);
  });
});
