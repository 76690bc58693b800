// The contract check itself must be able to fail: feed it responses that break the document in each way.
import { describe, expect, it } from 'vitest';
import { ContractViolation, validateResponse } from './support/contract.js';

const rateLimitHeaders = {
  'RateLimit-Limit': '600',
  'RateLimit-Remaining': '599',
  'RateLimit-Reset': '60',
  'X-Request-Id': 'r1',
};
const readHeaders = {
  ...rateLimitHeaders,
  'Cache-Control': 'public, max-age=60',
  ETag: 'W/"x"',
  Age: '0',
  'Content-Type': 'application/json',
};
const url = (path: string) => new URL(path, 'http://localhost');

function run(path: string, status: number, headers: Record<string, string>, body: unknown, method = 'GET') {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return () => validateResponse(method, url(path), new Response(null, { status, headers }), text);
}

describe('contract validation of responses', () => {
  const collections = { collections: [{ id: 'pcol_1', title: 'T', handle: 'h' }] };

  it('accepts a documented response', () => {
    expect(run('/api/store/collections', 200, readHeaders, collections)).not.toThrow();
  });

  it('rejects an undocumented status', () => {
    expect(run('/api/store/collections', 418, readHeaders, collections)).toThrow(/not documented/);
  });

  it('rejects a missing required header', () => {
    const { 'RateLimit-Remaining': _, ...headers } = readHeaders;
    expect(run('/api/store/collections', 200, headers, collections)).toThrow(/RateLimit-Remaining/);
  });

  it('rejects a malformed header value', () => {
    expect(run('/api/store/collections', 200, { ...readHeaders, 'RateLimit-Reset': 'soon' }, collections)).toThrow(
      ContractViolation,
    );
  });

  it('rejects an undocumented field and a wrong type', () => {
    expect(
      run('/api/store/collections', 200, readHeaders, {
        collections: [{ id: 'a', title: 'T', handle: 'h', extra: 1 }],
      }),
    ).toThrow(/schema/);
    expect(
      run('/api/store/collections', 200, readHeaders, { collections: [{ id: 1, title: 'T', handle: 'h' }] }),
    ).toThrow(/schema/);
  });

  it('rejects an undocumented media type', () => {
    expect(run('/api/store/collections', 200, { ...readHeaders, 'Content-Type': 'text/html' }, '<p>')).toThrow(
      /Content-Type/,
    );
  });

  it('accepts unrouted 404s only in the surface error shape', () => {
    const error = { error: { code: 'unknown_endpoint', message: 'm', resolution: 'r' } };
    expect(run('/nowhere', 404, readHeaders, error)).not.toThrow();
    expect(run('/nowhere', 404, readHeaders, { message: 'Not Found' })).toThrow(/ReadError/);
    expect(run('/nowhere', 200, readHeaders, error)).toThrow(/not 404\/405\/429/);
    expect(
      run('/nowhere', 429, readHeaders, { error: { code: 'rate_limited', message: 'm', resolution: 'r' } }),
    ).toThrow(/Retry-After/);
  });

  it('expects each family of paths in its own error shape, whatever surface answered', () => {
    const readError = { error: { code: 'unknown_endpoint', message: 'm', resolution: 'r' } };
    const oauthError = { error: 'unknown_endpoint', error_description: 'm' };
    // An agent path answered by the reads surface (a routing mistake) is a violation, decoded spellings included.
    expect(run('/agent/nowhere', 404, readHeaders, readError)).toThrow(/OAuthError/);
    expect(run('/%61gent/nowhere/', 404, readHeaders, readError)).toThrow(/OAuthError/);
    expect(run('/agent/nowhere', 404, readHeaders, oauthError)).not.toThrow();
    expect(run('/checkout_sessions/x/nowhere', 404, readHeaders, readError)).toThrow(/CheckoutError/);
    expect(run('/ucp/nowhere', 404, readHeaders, readError)).toThrow(/UcpError/);
    expect(run('/acp/nowhere', 404, readHeaders, readError)).toThrow(/AcpError/);
    expect(run('/agents', 404, readHeaders, readError)).not.toThrow();
  });
});
