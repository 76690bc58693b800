// Two real instances on one PostgreSQL and one Redis behave as one service: one session per Idempotency-Key, tokens
// and revocations honoured by both, a cancel seen by both, and one rate-limit count. PostgreSQL only (an embedded
// PGlite belongs to one process).
import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, json } from './support/contract.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
import { processTestTimeout, startServiceProcess, type ServiceProcess } from './support/process.js';

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;

const form = (body: string, authorization: string) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: authorization },
  body,
});
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe.skipIf(!serverUrl || !redisUrl)('two instances behind a load balancer', () => {
  let database: TestDatabase;
  let one: ServiceProcess;
  let two: ServiceProcess;

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = {
      ...(database.env as Record<string, string>),
      REDIS_URL: redisUrl!,
      BASE_URL: 'https://store.example',
      RATE_LIMIT_PER_MINUTE: '1000',
      TRUST_PROXY: 'true',
    };
    [one, two] = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  }, processTestTimeout(1));
  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await database?.drop();
  });

  it('builds one session for the same Idempotency-Key sent to both at once', async () => {
    const body = { items: [{ id: 'variant_01tongue2pack', quantity: 3 }] };
    const results = await Promise.all(
      [one, two, one, two].map((instance) =>
        call(`${instance.url}/checkout_sessions`, json(body, { 'Idempotency-Key': 'two-instances' })),
      ),
    );
    const fresh = results.filter((r) => !r.headers.has('idempotent-replayed'));
    expect(fresh).toHaveLength(1);
    for (const result of results) {
      expect(result.status).toBe(201);
      expect(result.body.id).toBe(fresh[0]!.body.id);
    }
    const replay = await call(`${two.url}/checkout_sessions`, json(body, { 'Idempotency-Key': 'two-instances' }));
    expect(replay.body.id).toBe(fresh[0]!.body.id);
  });

  it('sees a cancel made on the other instance', async () => {
    const created = await call(`${one.url}/checkout-sessions`, json({ items: [{ id: 'variant_01tonguetravel' }] }));
    await call(`${two.url}/checkout_sessions/${created.body.id}/cancel`, { method: 'POST' });
    expect((await call(`${one.url}/checkout_sessions/${created.body.id}`)).body.status).toBe('canceled');
  });

  it('accepts a token issued by the other instance, and refuses it on the next request after a revocation there', async () => {
    const client = await call(
      `${one.url}/oauth/register`,
      json({ client_name: 'lb test', scope: 'catalog:read', grant_types: ['client_credentials'] }),
    );
    const auth = basic(client.body.client_id, client.body.client_secret);
    const token = (await call(`${one.url}/oauth/token`, form('grant_type=client_credentials', auth))).body.access_token;
    const bearer = { headers: { Authorization: `Bearer ${token}` } };
    expect((await call(`${two.url}/agent/products`, bearer)).status).toBe(200);
    expect((await call(`${one.url}/oauth/revoke`, form(`token=${encodeURIComponent(token)}`, auth))).status).toBe(200);
    expect((await call(`${two.url}/agent/products`, bearer)).status).toBe(401);
  });

  it('counts the rate limit across both', async () => {
    const client = { 'X-Forwarded-For': `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` };
    const first = await call(`${one.url}/readyz`, { headers: client });
    const second = await call(`${two.url}/readyz`, { headers: client });
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(
      Number(first.headers.get('ratelimit-remaining')) - 1,
    );
  });
});
