// Cross-cutting HTTP behaviour: security headers, CORS, rate limits (per surface shape), body limits and nesting,
// and the server's timeouts against slow or idle clients.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService({ env: { RATE_LIMIT_PER_MINUTE: '100000' } });
});
afterAll(async () => {
  await api?.close();
});

describe('security headers', () => {
  it('sends nosniff and a strict CSP on JSON, and no stack traces in errors', async () => {
    const response = await api.http('/api/store/products?limit=abc');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
    const text = await response.text();
    expect(text).not.toMatch(/at .*\.(ts|js):\d+|node_modules|stack/);
  });
});

describe('CORS', () => {
  it('answers a preflight for checkout from any origin', async () => {
    const preflight = await api.http('/checkout_sessions', {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://shop.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,idempotency-key',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('Idempotency-Key');
  });

  it('exposes the headers a browser client needs on reads', async () => {
    const response = await api.http('/api/store/regions', { headers: { Origin: 'https://shop.example' } });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('access-control-expose-headers')).toContain('RateLimit-Remaining');
  });

  it('sends no CORS headers on the OAuth surface', async () => {
    const response = await api.http('/.well-known/oauth-authorization-server', {
      headers: { Origin: 'https://shop.example' },
    });
    expect(response.headers.has('access-control-allow-origin')).toBe(false);
  });
});

describe('request bodies', () => {
  const post = (body: string, contentType = 'application/json') =>
    api.http('/checkout_sessions', { method: 'POST', headers: { 'Content-Type': contentType }, body });

  it('answers 413 to a body over 100 kB', async () => {
    const response = await post(JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }], pad: 'x'.repeat(110_000) }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ type: 'invalid_request', code: 'payload_too_large', param: 'body' });
  });

  it('answers a documented 413 on complete, whose optional body is ignored but still limited', async () => {
    const created = await post(JSON.stringify({ items: [{ id: 'variant_01tongue2pack', quantity: 1 }] }));
    const { id } = (await created.json()) as { id: string };
    for (const path of [`/checkout_sessions/${id}/complete`, `/checkout-sessions/${id}/complete`]) {
      const response = await api.http(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ payment_data: { token: 'x'.repeat(110_000) } }),
      });
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ code: 'payload_too_large', param: 'body' });
    }
  });

  it('refuses deeply nested JSON without exhausting the stack', async () => {
    const deep = '{"items":' + '['.repeat(5_000) + ']'.repeat(5_000) + '}';
    const response = await post(deep);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/nested/);
    expect((await api.http('/healthz')).status).toBe(200);
  });
});

describe('slow and idle clients', () => {
  let slow: TestService;
  beforeAll(async () => {
    slow = await startTestService({
      env: { HTTP_HEADERS_TIMEOUT_MS: '1000', HTTP_REQUEST_TIMEOUT_MS: '2000', HTTP_KEEPALIVE_TIMEOUT_MS: '1000' },
    });
  });
  afterAll(async () => {
    await slow?.close();
  });

  /** Opens a raw connection, writes `first`, then keeps trickling `drip` every 300 ms; resolves with what came back once the server closes. */
  function trickle(first: string, drip = ''): Promise<string> {
    const { port } = new URL(slow.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(first));
      let received = '';
      const timer = drip ? setInterval(() => socket.writable && socket.write(drip), 300) : undefined;
      // Without the server's timeouts the socket stays open for minutes; the test's own limit is far shorter.
      const giveUp = setTimeout(() => reject(new Error(`still open after 20 s; received: ${received}`)), 20_000);
      socket.on('data', (chunk) => (received += chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(timer);
        clearTimeout(giveUp);
        resolve(received);
      });
    });
  }

  it('closes a connection whose headers never finish', async () => {
    expect(await trickle('GET /api/store/regions HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n')).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes a connection whose body never finishes', async () => {
    const head =
      'POST /checkout_sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
    expect(await trickle(head, ' ')).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes an idle keep-alive connection', async () => {
    expect(await trickle('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 200/);
  });
});
