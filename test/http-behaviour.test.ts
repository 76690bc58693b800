// Cross-cutting HTTP behaviour: security headers, CORS, rate limits (per surface shape), body limits and nesting.
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
      headers: { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type,idempotency-key' },
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
    const response = await api.http('/.well-known/oauth-authorization-server', { headers: { Origin: 'https://shop.example' } });
    expect(response.headers.has('access-control-allow-origin')).toBe(false);
  });
});

describe('request bodies', () => {
  const post = (body: string, contentType = 'application/json') => api.http('/checkout_sessions', { method: 'POST', headers: { 'Content-Type': contentType }, body });

  it('answers 413 to a body over 100 kB', async () => {
    const response = await post(JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }], pad: 'x'.repeat(110_000) }));
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ type: 'invalid_request', code: 'payload_too_large', param: 'body' });
  });

  it('refuses deeply nested JSON without exhausting the stack', async () => {
    const deep = '{"items":' + '['.repeat(5_000) + ']'.repeat(5_000) + '}';
    const response = await post(deep);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/nested/);
    expect((await api.http('/healthz')).status).toBe(200);
  });
});
