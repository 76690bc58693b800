// Requests to addresses a client names (issue #29, findings 3 and 4): platform profiles named in UCP-Agent and agent
// webhook URLs go through one egress guard. Without EGRESS_ALLOWED_HOSTS no spelling of a non-public address is ever
// connected to, whether the client spells it or a name resolves to it, and a profile that cannot be used is answered in
// one message whatever went wrong, so the service cannot be used to scan ports. Every body is validated against the
// OpenAPI document and the protocol schemas.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueOrderEvent } from '../src/services/order-webhooks.js';
import { registerClient } from './support/agent.js';
import {
  PROTOCOL_ENV,
  protocolFetch,
  startProfileServer,
  ucpHeaders,
  type ProfileServer,
} from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

/** A TCP listener on every local address (IPv4 and IPv6) that counts the connections made to it, and answers nothing. */
interface Listener {
  port: number;
  connections: number;
  close(): Promise<void>;
}

async function startListener(): Promise<Listener> {
  const sockets = new Set<Socket>();
  const listener = { port: 0, connections: 0, close: async () => {} };
  const server: Server = createServer((socket) => {
    listener.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '::', resolve));
  listener.port = (server.address() as AddressInfo).port;
  listener.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return listener;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Every spelling of a non-public address a client might name, on `port` where the address is this machine's. */
function privateTargets(port: number): string[] {
  return [
    `https://127.0.0.1:${port}/profile.json`,
    `https://127.1:${port}/profile.json`,
    `https://2130706433:${port}/profile.json`,
    `https://0x7f.0.0.1:${port}/profile.json`,
    `https://0.0.0.0:${port}/profile.json`,
    `https://[::1]:${port}/profile.json`,
    `https://[::ffff:127.0.0.1]:${port}/profile.json`,
    `https://localhost:${port}/profile.json`,
    `https://10.0.0.1:${port}/profile.json`,
    `https://192.168.1.1:${port}/profile.json`,
    `https://172.16.0.1:${port}/profile.json`,
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/profile.json',
    'https://[fd00::1]/profile.json',
    'https://[fe80::1]/profile.json',
  ];
}

/** A UCP read that negotiates the profile at `profile` first (the session need not exist). */
function readNaming(api: TestService, profile: string) {
  return protocolFetch(api, `/ucp/checkout-sessions/${randomUUID()}`, { headers: ucpHeaders(profile) });
}

describe('platform profiles, with no host allowed to be private', () => {
  let api: TestService;
  let listener: Listener;
  beforeAll(async () => {
    listener = await startListener();
    api = await startTestService({
      env: { ...PROTOCOL_ENV, UCP_INSECURE_PROFILE_HOSTS: '', EGRESS_ALLOWED_HOSTS: '' },
    });
  });
  afterAll(async () => {
    await api?.close();
    await listener?.close();
  });

  it('never connects to a non-public address, however it is spelled, and answers each in one message', async () => {
    const contents = new Set<string>();
    for (const target of privateTargets(listener.port)) {
      const { response, body } = await readNaming(api, target);
      expect([target, response.status, body.code]).toEqual([target, 424, 'profile_unreachable']);
      expect(body.path).toBeUndefined();
      contents.add(body.content);
    }
    expect(contents.size).toBe(1);
    expect(listener.connections).toBe(0);
  });

  it('over /ucp/mcp too', async () => {
    const response = await api.http('/ucp/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'get_checkout',
          arguments: {
            meta: { 'ucp-agent': { profile: `https://2130706433:${listener.port}/profile.json` } },
            id: 'chk_1',
          },
        },
      }),
    });
    const body = (await response.json()) as any;
    expect([response.status, body.error?.data?.code]).toEqual([424, 'profile_unreachable']);
    expect(listener.connections).toBe(0);
  });
});

describe('platform profiles that cannot be used, at a host the operator allows', () => {
  let api: TestService;
  let profiles: ProfileServer;
  beforeAll(async () => {
    profiles = await startProfileServer();
    api = await startTestService({ env: PROTOCOL_ENV });
  });
  afterAll(async () => {
    await api?.close();
    await profiles?.close();
  });

  it('are answered in one message per code: no status, size, content type or schema path of a document that is no profile', async () => {
    const unreachable = [
      profiles.url('/missing.json'),
      profiles.url('/redirect.json'),
      profiles.url('/huge.json'),
      `http://127.0.0.1:${await closedPort()}/profile.json`,
    ];
    const malformed = [profiles.url('/not-json'), profiles.url('/not-a-profile.json')];
    for (const [targets, status, code] of [
      [unreachable, 424, 'profile_unreachable'],
      [malformed, 422, 'profile_malformed'],
    ] as const) {
      const answers = await Promise.all(targets.map((target) => readNaming(api, target)));
      expect(answers.map(({ response, body }) => [response.status, body.code])).toEqual(
        targets.map(() => [status, code]),
      );
      expect(answers.map(({ body }) => body.path)).toEqual(targets.map(() => undefined));
      expect(new Set(answers.map(({ body }) => body.content)).size).toBe(1);
    }
    // A document that declares a UCP version is a platform's profile: its platform is told what to fix.
    const profile = await readNaming(api, profiles.url('/invalid.json'));
    expect([profile.response.status, profile.body.code]).toEqual([422, 'profile_malformed']);
    expect(profile.body.content).toMatch(/ Fix \$\.ucp/);
  });
});

describe('agent webhook URLs', () => {
  it('are refused at registration when they name a private address, even with NODE_ENV=production', async () => {
    const api = await startTestService({
      env: {
        NODE_ENV: 'production',
        PAYMENTS_MODE: 'test',
        AGENT_WEBHOOK_KEY: 'a-production-key-of-at-least-32-characters',
        EGRESS_ALLOWED_HOSTS: '',
      },
    });
    try {
      const refused = [
        'http://127.0.0.1:8080/hooks',
        'http://localhost:8080/hooks',
        ...privateTargets(8443).map((url) => url.replace('/profile.json', '/hooks')),
        'https://foo.localhost/hooks',
      ];
      for (const webhook_url of refused) {
        const response = await api.http('/oauth/register', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ scope: 'orders:read', webhook_url }),
        });
        const body = (await response.json()) as any;
        expect([webhook_url, response.status, body.error]).toEqual([webhook_url, 400, 'invalid_client_metadata']);
      }
      expect(Number((await api.service.deps.db('oauth_clients').count({ n: '*' }))[0]!.n)).toBe(0);
      await registerClient(api, { scope: 'orders:read', webhook_url: 'https://agent.example/hooks' });
    } finally {
      await api.close();
    }
  });

  describe('delivered to a name that resolves to a private address', () => {
    let api: TestService;
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
      // 127.0.0.1 is allowed (test/support/service.ts); the name localhost is not, though it resolves there.
      api = await startTestService({ env: { EGRESS_ALLOWED_HOSTS: '127.0.0.1' } });
    });
    afterAll(async () => {
      await api?.close();
      await receiver?.close();
    });

    it('is refused when sent, while a delivery to an allowed host goes out', async () => {
      const { deps } = api.service;
      const allowed = (await registerClient(api, { scope: 'orders:read', webhook_url: receiver.url })) as any;
      const renamed = (await registerClient(api, { scope: 'orders:read', webhook_url: receiver.url })) as any;
      receiver.secret = allowed.webhook_secret;
      // As if the registered name had been pointed at this machine after registration.
      await deps
        .db('oauth_clients')
        .where({ id: renamed.client_id })
        .update({ webhook_url: receiver.url.replace('127.0.0.1', 'localhost') });
      await enqueueOrderEvent(deps.db, deps, renamed.client_id, 'order.created', { id: 'order_renamed' });
      await enqueueOrderEvent(deps.db, deps, allowed.client_id, 'order.created', { id: 'order_allowed' });
      const [delivered] = await receiver.waitFor(1);
      expect(delivered!.body.data.order.id).toBe('order_allowed');
      const attempted = async () =>
        (await deps.db('webhook_deliveries').where({ client_id: renamed.client_id }).first()) as any;
      const deadline = Date.now() + 60_000;
      while (!(await attempted()).last_error && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      const row = await attempted();
      expect([row.delivered_at, row.last_error]).toEqual([null, expect.stringMatching(/^refused: /)]);
      expect(receiver.received.map((event) => event.body.data.order.id)).toEqual(['order_allowed']);
    });
  });
});
