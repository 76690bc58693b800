// Generated garbage against every write endpoint and odd queries and paths against every read endpoint: never a
// 5xx, always a documented status and shape (contractFetch checks it), the process stays up, and a failed request
// leaves every stored row exactly as it was.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let cartPath: string;
let authorization: { Authorization: string };
beforeAll(async () => {
  api = await startTestService();
  authorization = bearer(await agentToken(api, 'catalog:read cart:write'));
  const cart = await api.http('/agent/carts', { method: 'POST', headers: { ...authorization, 'Content-Type': 'application/json' }, body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }) });
  cartPath = `/agent/carts/${((await cart.json()) as { id: string }).id}`;
});
afterAll(async () => {
  await api?.close();
});

/** Row count and content hash of every table: any change to stored data changes it. */
async function fingerprint(): Promise<string> {
  const db = api.service.deps.db;
  const tables = ((await db.raw(`select tablename from pg_tables where schemaname = current_schema() and tablename not like 'knex_%' order by tablename`)).rows as { tablename: string }[]).map((row) => row.tablename);
  const parts = [];
  for (const table of tables) {
    const { rows } = await db.raw(`select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ?? t`, [table]);
    parts.push(`${table}:${rows[0].n}:${rows[0].h}`);
  }
  return parts.join(',');
}

const sqlish = fc.constantFrom("' OR 1=1 --", "'); DROP TABLE carts; --", '"; SELECT pg_sleep(5); --', '\u0000', '%00', '../../etc/passwd', '${jndi:ldap://x}', '<script>alert(1)</script>');
const pollution = fc.constantFrom('__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty');
const hostileString = fc.oneof(sqlish, fc.string({ maxLength: 40 }), fc.string({ minLength: 1000, maxLength: 20_000 }), fc.string({ unit: 'grapheme', maxLength: 30 }));
const hostileValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(pollution, fc.string({ maxLength: 12 }), fc.constantFrom('items', 'id', 'quantity', 'promo_codes', 'scope', 'grant_types', 'region_id')), tie('value'), { maxKeys: 5 }),
  ),
})).value;
const itemsLike = fc.record({ items: fc.oneof(hostileValue, fc.array(fc.dictionary(fc.oneof(pollution, fc.constantFrom('id', 'variant_id', 'handle', 'sku', 'quantity')), hostileValue, { maxKeys: 4 }), { maxLength: 5 })) }, { requiredKeys: [] });
const deepNesting = fc.integer({ min: 33, max: 3_000 }).map((depth) => '{"items":' + '['.repeat(depth) + ']'.repeat(depth) + '}');
const invalidUtf8 = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((bytes) => Buffer.concat([Buffer.from('{"items":[{"id":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(bytes), Buffer.from('"}]}')]));
const body = fc.oneof(
  hostileValue.map((value) => JSON.stringify(value) ?? 'null'),
  itemsLike.map((value) => JSON.stringify(value)),
  deepNesting,
  invalidUtf8,
  hostileString,
  fc.constant(''),
);
const contentType = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', undefined);

const writeEndpoints = [
  '/checkout_sessions',
  '/checkout-sessions',
  '/checkout_sessions/cart_nope/complete',
  '/checkout_sessions/cart_nope/cancel',
  '/oauth/register',
  '/oauth/token',
  '/oauth/revoke',
];

async function expectHarmless(response: Response): Promise<void> {
  expect(response.status).toBeLessThan(500);
  const type = response.headers.get('content-type') ?? '';
  if (response.status !== 304) expect(type).toMatch(/json|html/);
}

describe('hostile input', () => {
  it.each(writeEndpoints)('POST %s never answers 5xx and never changes stored data when it fails', async (path) => {
    await fc.assert(
      fc.asyncProperty(body, contentType, async (payload, type) => {
        const before = await fingerprint();
        const response = await api.http(path, { method: 'POST', headers: type ? { 'Content-Type': type } : {}, body: payload });
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
  ])('%s /agent/carts…%s with a cart:write token never answers 5xx and never changes stored data when it fails', async (method, suffix) => {
    await fc.assert(
      fc.asyncProperty(body, contentType, async (payload, type) => {
        const before = await fingerprint();
        const path = suffix === '' ? '/agent/carts' : `${cartPath}${suffix}`;
        const response = await api.http(path, { method, headers: { ...authorization, ...(type ? { 'Content-Type': type } : {}) }, body: payload });
        await expectHarmless(response);
        if (response.status >= 400) expect(await fingerprint()).toBe(before);
      }),
      { numRuns: 40 },
    );
  });

  const readPaths = ['/api/store/products', '/api/store/products/prod_01tongue2pack', '/api/store/reviews', '/api/store/regions', '/api/store/collections', '/changelog', '/agent/products'];
  const queryPart = fc.oneof(fc.string({ maxLength: 20 }), sqlish, fc.constantFrom('limit', 'offset', 'fields', 'region_id', 'handle', 'product_id', '%ZZ', '%', '+', '[]', 'a[b]', '__proto__'));
  const queryString = fc.array(fc.tuple(queryPart, queryPart), { maxLength: 5 }).map((pairs) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&'));
  const rawQuery = fc.constantFrom('limit=1&limit=2', 'fields=%ZZ', 'fields=' + '*variants.'.repeat(200), 'offset=1e3', 'limit=0x10', 'limit=%20', 'a=%E0%A4%A', '&&&==', 'region_id[]=reg_us');

  it('GET read endpoints never answer 5xx whatever the query', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...readPaths), fc.oneof(queryString, rawQuery), async (path, query) => {
        await expectHarmless(await api.http(`${path}?${query}`));
      }),
      { numRuns: 150 },
    );
  });

  it('odd paths answer JSON 4xx', async () => {
    const oddPaths = ['/api/store/products/%00', '/api/store/products/%ZZ', '/api/store/products/' + 'x'.repeat(5_000), '/api/store/products/..%2F..%2Fetc%2Fpasswd', '/api//store/products', '/checkout_sessions/%E0%A4%A/cancel', '/pay/%ZZ', '/agent/%ZZ', '/%2e%2e/', '/api/store/products/prod_01tongue2pack/'];
    for (const path of oddPaths) await expectHarmless(await api.http(path));
    expect((await api.http('/healthz')).status).toBe(200);
  });
});
