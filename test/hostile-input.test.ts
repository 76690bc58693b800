// Generated garbage against every write endpoint and odd queries and paths against every read endpoint: never a
// 5xx, always a documented status and shape (contractFetch checks it), the process stays up, and a failed request
// leaves every stored row exactly as it was.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import {
  expectHarmless,
  fingerprint as fingerprintOf,
  hostileBody as body,
  hostileContentType as contentType,
  sqlish,
} from './support/hostile.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let cartPath: string;
let authorization: { Authorization: string };
beforeAll(async () => {
  api = await startTestService();
  authorization = bearer(await agentToken(api, 'catalog:read cart:write'));
  const cart = await api.http('/agent/carts', {
    method: 'POST',
    headers: { ...authorization, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
  });
  cartPath = `/agent/carts/${((await cart.json()) as { id: string }).id}`;
});
afterAll(async () => {
  await api?.close();
});

const fingerprint = () => fingerprintOf(api.service.deps.db);

const writeEndpoints = [
  '/checkout_sessions',
  '/checkout-sessions',
  '/checkout_sessions/cart_nope/complete',
  '/checkout_sessions/cart_nope/cancel',
  '/oauth/register',
  '/oauth/token',
  '/oauth/revoke',
];

describe('hostile input', () => {
  it.each(writeEndpoints)('POST %s never answers 5xx and never changes stored data when it fails', async (path) => {
    await fc.assert(
      fc.asyncProperty(body, contentType, async (payload, type) => {
        const before = await fingerprint();
        const response = await api.http(path, {
          method: 'POST',
          headers: type ? { 'Content-Type': type } : {},
          body: payload,
        });
        await expectHarmless(response);
        if (response.status >= 400) expect(await fingerprint()).toBe(before);
      }),
      { numRuns: 40 },
    );
  });

  it.each([
    ['POST', ''],
    ['POST', '/line-items'],
    ['PATCH', '/line-items/cali_nope'],
    ['POST', '/checkout-session'],
  ])(
    '%s /agent/carts…%s with a cart:write token never answers 5xx and never changes stored data when it fails',
    async (method, suffix) => {
      await fc.assert(
        fc.asyncProperty(body, contentType, async (payload, type) => {
          const before = await fingerprint();
          const path = suffix === '' ? '/agent/carts' : `${cartPath}${suffix}`;
          const response = await api.http(path, {
            method,
            headers: { ...authorization, ...(type ? { 'Content-Type': type } : {}) },
            body: payload,
          });
          await expectHarmless(response);
          if (response.status >= 400) expect(await fingerprint()).toBe(before);
        }),
        { numRuns: 40 },
      );
    },
  );

  const readPaths = [
    '/api/store/products',
    '/api/store/products/prod_01tongue2pack',
    '/api/store/reviews',
    '/api/store/regions',
    '/api/store/collections',
    '/changelog',
    '/agent/products',
  ];
  const queryPart = fc.oneof(
    fc.string({ maxLength: 20 }),
    sqlish,
    fc.constantFrom(
      'limit',
      'offset',
      'fields',
      'region_id',
      'handle',
      'product_id',
      '%ZZ',
      '%',
      '+',
      '[]',
      'a[b]',
      '__proto__',
    ),
  );
  const queryString = fc
    .array(fc.tuple(queryPart, queryPart), { maxLength: 5 })
    .map((pairs) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&'));
  const rawQuery = fc.constantFrom(
    'limit=1&limit=2',
    'fields=%ZZ',
    'fields=' + '*variants.'.repeat(200),
    'offset=1e3',
    'limit=0x10',
    'limit=%20',
    'a=%E0%A4%A',
    '&&&==',
    'region_id[]=reg_us',
  );

  it('GET read endpoints never answer 5xx whatever the query', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...readPaths), fc.oneof(queryString, rawQuery), async (path, query) => {
        await expectHarmless(await api.http(`${path}?${query}`));
      }),
      { numRuns: 150 },
    );
  });

  it('odd paths answer JSON 4xx', async () => {
    const oddPaths = [
      '/api/store/products/%00',
      '/api/store/products/%ZZ',
      '/api/store/products/' + 'x'.repeat(5_000),
      '/api/store/products/..%2F..%2Fetc%2Fpasswd',
      '/api//store/products',
      '/checkout_sessions/%E0%A4%A/cancel',
      '/pay/%ZZ',
      '/agent/%ZZ',
      '/%2e%2e/',
      '/api/store/products/prod_01tongue2pack/',
    ];
    for (const path of oddPaths) await expectHarmless(await api.http(path));
    expect((await api.http('/healthz')).status).toBe(200);
  });
});
