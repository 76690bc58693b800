// Configuration parsing of the hardening settings (proxy hops, the HTTP timeouts' consistency) and the metrics listener.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('TRUST_PROXY', () => {
  it('is a number of trusted hops: true is one, false none', () => {
    const hops = (value?: string) => loadConfig(value === undefined ? {} : { TRUST_PROXY: value }).trustedProxyHops;
    expect([hops(), hops('false'), hops('true'), hops('0'), hops('1'), hops('2'), hops('10')]).toEqual([
      0, 0, 1, 0, 1, 2, 10,
    ]);
  });

  it('refuses anything else', () => {
    for (const value of ['11', '-1', 'maybe', '1.5'])
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(ConfigError);
  });
});

describe('timeouts', () => {
  it('have documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      redisCommandTimeoutMs: 50,
      databaseStatementTimeoutMs: 5_000,
      httpHeadersTimeoutMs: 10_000,
      httpRequestTimeoutMs: 30_000,
      httpKeepAliveTimeoutMs: 65_000,
    });
  });

  it('refuse a headers timeout longer than the request timeout', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS/,
    );
  });
});

describe('retention', () => {
  it('has the documented periods by default, and takes each in seconds', () => {
    const DAY = 24 * 60 * 60 * 1000;
    expect(loadConfig({}).retention).toEqual({
      sweepEveryMs: 5 * 60 * 1000,
      idempotencyMs: DAY,
      expiredTokensMs: DAY,
      idleClientsMs: 90 * DAY,
      openCartsMs: 7 * DAY,
      unpaidSessionsMs: 30 * DAY,
      canceledSessionsMs: 30 * DAY,
    });
    const short = loadConfig({ RETENTION_SWEEP_SECONDS: '15', RETENTION_UNPAID_SESSIONS_SECONDS: '60' }).retention;
    expect([short.sweepEveryMs, short.unpaidSessionsMs]).toEqual([15_000, 60_000]);
    expect(() => loadConfig({ RETENTION_OPEN_CARTS_SECONDS: '0' })).toThrow(ConfigError);
  });

  it("writes the UCP namespace in each version's grammar: hyphens kept for 2026-08-25, `_` for 2026-04-08 and ACP", () => {
    const derived = loadConfig({ BASE_URL: 'https://my-shop.example.com' }).protocols;
    expect([derived.namespace, derived.namespace20260825]).toEqual(['com.example.my_shop', 'com.example.my-shop']);
    const plain = loadConfig({ BASE_URL: 'https://shop.example.com' }).protocols;
    expect([plain.namespace, plain.namespace20260825]).toEqual(['com.example.shop', 'com.example.shop']);
    const explicit = loadConfig({
      BASE_URL: 'https://x.example.com',
      UCP_NAMESPACE: 'com.example-shop.store',
    }).protocols;
    expect([explicit.namespace, explicit.namespace20260825]).toEqual([
      'com.example_shop.store',
      'com.example-shop.store',
    ]);
    expect(() => loadConfig({ BASE_URL: 'https://x.example.com', UCP_NAMESPACE: 'com.-shop' })).toThrow(ConfigError);
  });
});

describe('METRICS_PORT and METRICS_HOST', () => {
  it('are off unless METRICS_PORT is set, and bind to loopback by default', () => {
    expect(loadConfig({}).metrics).toBeUndefined();
    expect(loadConfig({ METRICS_HOST: '0.0.0.0' }).metrics).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(loadConfig({ METRICS_PORT: '0', METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ port: 0, host: '10.0.0.5' });
  });

  it('refuses a port that is not one', () => {
    for (const value of ['65536', '-1', 'metrics'])
      expect(() => loadConfig({ METRICS_PORT: value })).toThrow(ConfigError);
  });
});
