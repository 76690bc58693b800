// The merchant's side (issue #35): admin clients made only by the operator's command, the /admin API's scope checks,
// and the order loop (paid, shipped, delivered; another cancelled and refunded), each change told to the agent once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/admin/commands.js';
import { createLogger } from '../src/log.js';
import { registerClient, requestToken, type RegisteredClient } from './support/agent.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api?.close();
});

/** `npm run admin -- …` against the test service's database; its exit code and what it printed. */
async function admin(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const { db } = api.service.deps;
  const code = await runAdminCommand({ db, now: Date.now, log: createLogger('silent') }, argv, {
    out: (text) => (out += `${text}\n`),
    err: (text) => (err += `${text}\n`),
  });
  return { code, out, err };
}

/** A client the operator created with `scope`, its credentials as --json printed them. */
export async function adminClient(scope: string): Promise<RegisteredClient> {
  const { code, out } = await admin('clients', 'create', '--name', 'Back office', '--scope', scope, '--json');
  expect(code).toBe(0);
  return JSON.parse(out) as RegisteredClient;
}

describe('admin clients', () => {
  it('are created by the operator command, the secret shown once, and get admin tokens', async () => {
    const { code, out } = await admin(
      'clients',
      'create',
      '--name',
      'Back office',
      '--scope',
      'admin:promotions admin:orders',
      '--json',
    );
    expect(code).toBe(0);
    const client = JSON.parse(out) as RegisteredClient;
    expect(Object.keys(client).sort()).toEqual(['client_id', 'client_secret', 'scope']);
    expect(client).toMatchObject({
      scope: 'admin:orders admin:promotions',
      client_secret: expect.stringMatching(/^sfcs_/),
    });
    const row = await api.service.deps.db('oauth_clients').where({ id: client.client_id }).first();
    expect(row).toMatchObject({ name: 'Back office', scope: 'admin:orders admin:promotions' });
    expect(JSON.stringify(row)).not.toContain(client.client_secret);
    const token = await api.http('/oauth/token', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials&scope=admin:orders',
    });
    expect(token.status).toBe(200);
    expect(((await token.json()) as { scope: string }).scope).toBe('admin:orders');
  });

  it('prints a table without --json, and refuses bad usage and unknown scopes', async () => {
    const table = await admin('clients', 'create', '--name', 'Ops', '--scope', 'admin:catalog');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/client_secret +sfcs_/);
    expect(table.out).toContain('shown only this once');
    expect((await admin('clients', 'create', '--name', 'Ops', '--scope', 'admin:everything')).code).toBe(1);
    expect((await admin('clients', 'create', '--name', 'Ops', '--scope', '')).code).toBe(1);
    expect((await admin('clients', 'create', '--name', '  ', '--scope', 'admin:orders')).code).toBe(1);
    expect((await admin('clients', 'create', '--scope', 'admin:orders')).code).toBe(2);
    expect((await admin('clients', 'delete')).code).toBe(2);
    expect((await admin('clients', 'create', '--name', 'x', '--scope', 'admin:orders', '--bogus')).code).toBe(2);
  });

  it.each([
    'admin:orders',
    'admin:catalog',
    'admin:promotions',
    'ADMIN:ORDERS',
    'Admin:Orders',
    'catalog:read admin:orders',
    'admin:orders admin:orders',
    ' admin:orders ',
    'admin:orders\tcatalog:read',
    'admin:orders\ncatalog:read',
    'admin:orders,catalog:read',
    'admin',
    'admin:',
    'admin:*',
    'admin:orders:write',
    'admin:orders ',
    'admin%3Aorders',
    'admin:orders\u00a0',
    '\u0430dmin:orders',
  ])('open registration refuses the scope %j with invalid_scope', async (scope) => {
    const before = Number((await api.service.deps.db('oauth_clients').count({ n: '*' }))[0]!.n);
    const response = await api.http('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ scope }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_scope');
    expect(Number((await api.service.deps.db('oauth_clients').count({ n: '*' }))[0]!.n)).toBe(before);
  });

  it('never grants an admin scope to a registered client at the token endpoint', async () => {
    const client = await registerClient(api, { scope: 'catalog:read orders:read' });
    for (const scope of ['admin:orders', 'catalog:read admin:orders', 'ADMIN:ORDERS']) {
      const response = await api.http('/oauth/token', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          Authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
      });
      // Asked with a scope it has, it gets only that one (the intersection); asked for an admin scope alone, nothing.
      const body = (await response.json()) as { scope?: string; error?: string };
      if (scope.includes(' ')) expect(body.scope).toBe('catalog:read');
      else expect(body.error).toBe('invalid_scope');
    }
    expect(await requestToken(api, client)).toMatch(/^sfat_/);
  });
});
