// The service as a process: SIGTERM drains in-flight requests and exits 0; state survives a restart (sessions,
// idempotency keys, OAuth clients and tokens) on both storage paths.
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { validateResponse } from './support/contract.js';
import { processTestTimeout, startServiceProcess } from './support/process.js';

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});

/** fetch with contract validation, against a child process. */
async function call(url: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, init);
  const text = await response.text();
  validateResponse(init?.method ?? 'GET', new URL(url), response, text);
  return { status: response.status, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text, headers: response.headers };
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('SIGTERM', () => {
  it('stops accepting connections, finishes the request in flight, and exits 0', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const service = await startServiceProcess(database.env as Record<string, string>);
    const { port } = new URL(service.url);

    // A request whose body is still arriving when the signal comes.
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/checkout_sessions', headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' } }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.write('{"items": [{"id": "variant_01tongue2pack",');
      setTimeout(() => {
        service.child.kill('SIGTERM');
        setTimeout(() => req.end(' "quantity": 1}]}'), 300);
      }, 300);
    });

    const answered = await inFlight;
    expect(answered.status).toBe(201);
    expect(JSON.parse(answered.body).status).toBe('ready_for_payment');
    const started = Date.now();
    expect(await service.exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
    expect(service.output()).not.toMatch(/"level":50/);
  }, processTestTimeout(1));
});

describe('restart', () => {
  it('keeps sessions, idempotency keys, clients and tokens', async () => {
    const database = await createTestDatabase({ onDisk: true });
    databases.push(database);
    const env = { ...(database.env as Record<string, string>), BASE_URL: 'https://store.example' };

    const first = await startServiceProcess({ ...env, LOG_LEVEL: 'trace' });
    const created = await call(`${first.url}/checkout_sessions`, json({ items: [{ id: 'variant_01tonguetravel', quantity: 2 }] }, { 'Idempotency-Key': 'restart-key' }));
    const client = await call(`${first.url}/oauth/register`, json({ client_name: 'restart test', scope: 'catalog:read', grant_types: ['client_credentials'] }));
    const token = await call(`${first.url}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(client.body.client_id, client.body.client_secret) },
      body: 'grant_type=client_credentials',
    });
    expect([created.status, client.status, token.status]).toEqual([201, 201, 200]);
    expect(await first.stop()).toBe(0);
    // Even at the most verbose level, no credential reaches the logs.
    expect(first.output()).toContain('"path":"/oauth/token"');
    expect(first.output()).not.toContain(client.body.client_secret);
    expect(first.output()).not.toContain(token.body.access_token);

    const second = await startServiceProcess(env);
    try {
      expect((await call(`${second.url}/checkout_sessions/${created.body.id}`)).body).toEqual(created.body);
      const replay = await call(`${second.url}/checkout_sessions`, json({ items: [{ id: 'variant_01tonguetravel', quantity: 2 }] }, { 'Idempotency-Key': 'restart-key' }));
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.id).toBe(created.body.id);
      const products = await call(`${second.url}/agent/products`, { headers: { Authorization: `Bearer ${token.body.access_token}` } });
      expect(products.status).toBe(200);
      const fresh = await call(`${second.url}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(client.body.client_id, client.body.client_secret) },
        body: 'grant_type=client_credentials',
      });
      expect(fresh.status).toBe(200);
    } finally {
      await second.stop();
    }
  }, processTestTimeout(2));
});
