// The service as a process: SIGTERM drains (readiness 503, still answering, `Connection: close`), then finishes
// in-flight requests and exits 0; state survives a restart (sessions, idempotency keys, OAuth clients and tokens) on
// both storage paths.
import { Agent, request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { call, json } from './support/contract.js';
import { processTestTimeout, startServiceProcess } from './support/process.js';

const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const database of databases) await database.drop();
});

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** A GET over node:http: on a connection of `agent` (keep-alive), or on a fresh connection of its own. */
function get(
  url: string,
  path: string,
  agent: Agent | false,
): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('SIGTERM', () => {
  it('answers every request sent around the signal: on fresh connections just before it, on keep-alive ones after it', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const service = await startServiceProcess({
      ...(database.env as Record<string, string>),
      SHUTDOWN_DRAIN_MS: '1500',
    });
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 20 });
    const twenty = <T>(each: () => Promise<T>) => Promise.all(Array.from({ length: 20 }, each));
    try {
      // Twenty connections a balancer keeps open, then twenty requests on new connections written just before the signal.
      expect(
        new Set((await twenty(() => get(service.url, '/api/store/regions', keepAlive))).map((r) => r.status)),
      ).toEqual(new Set([200]));
      const fresh = twenty(() => get(service.url, '/api/store/regions', false));
      await new Promise((resolve) => setTimeout(resolve, 5));
      service.child.kill('SIGTERM');

      // Readiness fails at once, while requests are still answered, each asking the client to close its connection.
      await expect.poll(async () => (await call(`${service.url}/readyz`)).status).toBe(503);
      const readiness = await call(`${service.url}/readyz`);
      expect(readiness.body.status).toBe('draining');
      expect(readiness.headers.get('retry-after')).toBe('5');
      const kept = await twenty(() => get(service.url, '/api/store/regions', keepAlive));
      expect(kept.map((r) => [r.status, r.connection])).toEqual(Array(20).fill([200, 'close']));
      expect((await fresh).map((r) => r.status)).toEqual(Array(20).fill(200));

      expect(await service.exited).toBe(0);
      await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
    } finally {
      keepAlive.destroy();
      await service.stop('SIGKILL');
    }
  });

  it(
    'stops accepting connections, finishes the request in flight, and exits 0',
    async () => {
      const database = await createTestDatabase();
      databases.push(database);
      const service = await startServiceProcess(database.env as Record<string, string>);
      const { port } = new URL(service.url);

      // A request whose body is still arriving when the signal comes.
      const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/checkout_sessions',
            headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
          },
          (res) => {
            let body = '';
            res.on('data', (chunk) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
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
    },
    processTestTimeout(1),
  );
});

describe('restart', () => {
  it(
    'keeps sessions, idempotency keys, clients and tokens',
    async () => {
      const database = await createTestDatabase({ onDisk: true });
      databases.push(database);
      const env = { ...(database.env as Record<string, string>), BASE_URL: 'https://store.example' };

      const first = await startServiceProcess({ ...env, LOG_LEVEL: 'trace' });
      const created = await call(
        `${first.url}/checkout_sessions`,
        json({ items: [{ id: 'variant_01tonguetravel', quantity: 2 }] }, { 'Idempotency-Key': 'restart-key' }),
      );
      const client = await call(
        `${first.url}/oauth/register`,
        json({ client_name: 'restart test', scope: 'catalog:read', grant_types: ['client_credentials'] }),
      );
      const token = await call(`${first.url}/oauth/token`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: basic(client.body.client_id, client.body.client_secret),
        },
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
        const replay = await call(
          `${second.url}/checkout_sessions`,
          json({ items: [{ id: 'variant_01tonguetravel', quantity: 2 }] }, { 'Idempotency-Key': 'restart-key' }),
        );
        expect(replay.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.body.id).toBe(created.body.id);
        const products = await call(`${second.url}/agent/products`, {
          headers: { Authorization: `Bearer ${token.body.access_token}` },
        });
        expect(products.status).toBe(200);
        const fresh = await call(`${second.url}/oauth/token`, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/x-www-form-urlencoded',
            Authorization: basic(client.body.client_id, client.body.client_secret),
          },
          body: 'grant_type=client_credentials',
        });
        expect(fresh.status).toBe(200);
      } finally {
        await second.stop();
      }
    },
    processTestTimeout(2),
  );
});
