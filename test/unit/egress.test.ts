// The egress guard's parts: which addresses are public, which hosts are refused before any lookup, the allow-list
// setting, and that a connection goes to the address that was checked (no second resolution to rebind).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { isPublicAddress, isRefusedHost } from '../../src/domain/egress.js';
import { webhookUrlProblem } from '../../src/domain/webhooks.js';
import { createEgress, type Resolver } from '../../src/services/egress.js';

describe('isPublicAddress', () => {
  it('is true for public unicast addresses only', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '2606:4700::1111'])
      expect([address, isPublicAddress(address)]).toEqual([address, true]);
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.0.1',
      '169.254.169.254',
      '0.0.0.0',
      '0.1.2.3',
      '100.64.0.1',
      '224.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
      '::',
      '::1',
      'fd00::1',
      'fc00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      '2002:a00:1::',
      'not an address',
    ])
      expect([address, isPublicAddress(address)]).toEqual([address, false]);
    expect(isPublicAddress('::ffff:8.8.8.8')).toBe(true);
  });
});

describe('isRefusedHost', () => {
  const none = new Set<string>();
  it('refuses every spelling WHATWG URL normalises to a private literal, and loopback names', () => {
    for (const url of [
      'http://2130706433/',
      'http://127.1/',
      'http://0x7f.0.0.1/',
      'http://017700000001/',
      'http://0/',
      'http://[::ffff:127.0.0.1]/',
      'http://[0:0:0:0:0:ffff:7f00:1]/',
      'http://[::1]/',
      'http://localhost/',
      'http://LOCALHOST./',
      'http://api.localhost/',
    ])
      expect([url, isRefusedHost(new URL(url), none)]).toEqual([url, true]);
    for (const url of ['https://8.8.8.8/', 'https://agent.example/', 'https://[2001:4860:4860::8888]/'])
      expect([url, isRefusedHost(new URL(url), none)]).toEqual([url, false]);
  });

  it('lets through a host the operator named, by the name it is written with', () => {
    const allowed = new Set(['127.0.0.1', 'localhost']);
    expect(isRefusedHost(new URL('http://127.1:8080/'), allowed)).toBe(false);
    expect(isRefusedHost(new URL('http://localhost:8080/'), allowed)).toBe(false);
    expect(isRefusedHost(new URL('http://[::1]:8080/'), allowed)).toBe(true);
  });
});

describe('webhookUrlProblem', () => {
  it('takes https to a public host, and plain http only to an allowed host', () => {
    const none = new Set<string>();
    expect(webhookUrlProblem('https://agent.example/hooks', none)).toBeUndefined();
    expect(webhookUrlProblem('http://127.0.0.1:9/hooks', new Set(['127.0.0.1']))).toBeUndefined();
    expect(webhookUrlProblem('http://127.0.0.1:9/hooks', none)).toMatch(/https/);
    expect(webhookUrlProblem('https://127.0.0.1/hooks', none)).toMatch(/public host/);
    expect(webhookUrlProblem('https://[fd12::1]/hooks', none)).toMatch(/public host/);
    expect(webhookUrlProblem('http://agent.example/hooks', new Set(['127.0.0.1']))).toMatch(/https/);
  });
});

describe('EGRESS_ALLOWED_HOSTS', () => {
  it('is empty by default, whatever NODE_ENV says', () => {
    expect(loadConfig({}).egressAllowedHosts).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'development' }).egressAllowedHosts).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'test' }).egressAllowedHosts).toEqual([]);
  });

  it('takes hosts as URLs spell them, and refuses anything more than a host', () => {
    expect(loadConfig({ EGRESS_ALLOWED_HOSTS: ' 127.1, LocalHost ,[::1]' }).egressAllowedHosts).toEqual([
      '127.0.0.1',
      'localhost',
      '[::1]',
    ]);
    for (const value of ['127.0.0.1:8080', 'http://localhost', '::1', 'host/path', 'a b'])
      expect(() => loadConfig({ EGRESS_ALLOWED_HOSTS: value }), value).toThrow(ConfigError);
  });
});

describe('createEgress', () => {
  let server: Server;
  let port: number;
  let requests = 0;
  beforeAll(async () => {
    server = createServer((_request, response) => {
      requests += 1;
      response.end('reached');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const get = { method: 'GET' as const, headers: {}, timeoutMs: 2_000, maxResponseBytes: 1_024 };

  /** A resolver that answers each call with the next of `answers`, counting the calls. */
  function rebinding(...answers: string[]): Resolver & { calls: number } {
    const resolver = Object.assign(
      (_hostname: string, callback: Parameters<Resolver>[1]) => {
        const address = answers[Math.min(resolver.calls, answers.length - 1)]!;
        resolver.calls += 1;
        callback(null, [{ address, family: address.includes(':') ? 6 : 4 }]);
      },
      { calls: 0 },
    );
    return resolver;
  }

  it('connects to the address it checked: the name is resolved once, by the guard', async () => {
    const resolver = rebinding('127.0.0.1', '10.9.9.9');
    const answer = await createEgress(['pinned.test'], resolver).send(`http://pinned.test:${port}/`, get);
    expect(answer).toMatchObject({ ok: true, status: 200 });
    expect(answer.ok && answer.body.toString()).toBe('reached');
    expect(resolver.calls).toBe(1);
  });

  it('refuses a name resolving to a private address, and never asks again (a rebinding answer is not used)', async () => {
    const before = requests;
    const privately = rebinding('127.0.0.1');
    expect(await createEgress([], privately).send(`http://rebind.test:${port}/`, get)).toMatchObject({
      ok: false,
      failure: 'refused',
    });
    const publicFirst = rebinding('1.1.1.1', '127.0.0.1');
    const answer = await createEgress([], publicFirst).send(`http://rebind.test:${port}/`, { ...get, timeoutMs: 500 });
    expect(answer.ok).toBe(false);
    expect(publicFirst.calls).toBe(1);
    expect(requests).toBe(before);
  });

  it('refuses a name with any non-public address among its answers', async () => {
    const mixed: Resolver = (_hostname, callback) =>
      callback(null, [
        { address: '8.8.8.8', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    expect(await createEgress([], mixed).send(`http://mixed.test:${port}/`, get)).toMatchObject({
      ok: false,
      failure: 'refused',
    });
  });

  it('does not follow redirects and stops reading past the size cap', async () => {
    const redirecting = createServer((_request, response) => {
      response.writeHead(302, { Location: `http://127.0.0.1:${port}/` }).end();
    });
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const before = requests;
      const egress = createEgress(['127.0.0.1']);
      const redirect = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/`;
      expect(await egress.send(redirect, get)).toMatchObject({ ok: true, status: 302 });
      expect(requests).toBe(before);
      expect(await egress.send(`http://127.0.0.1:${port}/`, { ...get, maxResponseBytes: 3 })).toMatchObject({
        ok: false,
        failure: 'too_large',
      });
    } finally {
      await new Promise<void>((resolve) => redirecting.close(() => resolve()));
    }
  });
});
