import { describe, expect, it } from 'vitest';
import {
  bearerChallenge,
  clientCredentials,
  grantableScopes,
  hashSecret,
  hasScopes,
  newSecret,
  operatorScopes,
  parseBasicCredentials,
  parseBearerToken,
  parseScope,
  registrableScopes,
  secretMatches,
  tokenState,
} from '../../src/domain/auth.js';
import { DomainError, InvalidClient } from '../../src/domain/errors.js';
import { renderError } from '../../src/http/errors.js';

const basic = (raw: string) => `Basic ${Buffer.from(raw, 'utf8').toString('base64')}`;

function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('parseBasicCredentials (RFC 6749 section 2.3.1)', () => {
  it('splits id and secret at the first colon', () => {
    expect(parseBasicCredentials(basic('client_a:sfcs_b'))).toEqual({ clientId: 'client_a', clientSecret: 'sfcs_b' });
    expect(parseBasicCredentials(`basic   ${Buffer.from('a:b').toString('base64')}`)).toEqual({
      clientId: 'a',
      clientSecret: 'b',
    });
  });

  it('form-decodes both parts after base64, so an encoded colon, percent or plus survives', () => {
    expect(parseBasicCredentials(basic('id%3Awith%3Acolons:s%25e%2Bc+ret%3A'))).toEqual({
      clientId: 'id:with:colons',
      clientSecret: 's%e+c ret:',
    });
    expect(parseBasicCredentials(basic('%63lient:%73ecret'))).toEqual({ clientId: 'client', clientSecret: 'secret' });
  });

  it('accepts an empty secret but not an empty id', () => {
    expect(parseBasicCredentials(basic('client:'))).toEqual({ clientId: 'client', clientSecret: '' });
    expect(parseBasicCredentials(basic(':secret'))).toBeUndefined();
  });

  it.each([
    ['another scheme', 'Bearer abc'],
    ['no colon', basic('client-only')],
    ['broken percent-encoding', basic('client:%zz')],
    ['not base64', 'Basic !!!'],
    ['nothing after the scheme', 'Basic '],
  ])('rejects %s', (_why, header) => {
    expect(parseBasicCredentials(header)).toBeUndefined();
  });
});

describe('clientCredentials', () => {
  it('takes HTTP Basic, or client_id and client_secret from the form', () => {
    expect(clientCredentials(basic('a:b'), {})).toEqual({ clientId: 'a', clientSecret: 'b' });
    expect(clientCredentials(basic('a:b'), { client_id: 'a' })).toEqual({ clientId: 'a', clientSecret: 'b' });
    expect(clientCredentials('', { client_id: 'a', client_secret: 'b' })).toEqual({ clientId: 'a', clientSecret: 'b' });
  });

  it('is invalid_client with a Basic challenge when credentials are missing or unreadable', () => {
    for (const [header, form] of [
      ['', {}],
      ['', { client_id: 'a' }],
      ['Bearer x', {}],
      [basic('nocolon'), {}],
    ] as const) {
      const error = thrown(() => clientCredentials(header, form));
      expect(error).toBeInstanceOf(InvalidClient);
      const rendered = renderError(error, 'oauth');
      expect(rendered).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(rendered.headers['WWW-Authenticate']).toMatch(/^Basic /);
    }
  });

  it('is invalid_request when two methods are used or the ids disagree', () => {
    expect(thrown(() => clientCredentials(basic('a:b'), { client_secret: 'b' }))).toMatchObject({
      reason: 'invalid_request',
    });
    expect(thrown(() => clientCredentials(basic('a:b'), { client_id: 'other' }))).toMatchObject({
      reason: 'invalid_request',
    });
  });
});

describe('parseBearerToken (RFC 6750 section 2.1)', () => {
  it('reads the b64token after a case-insensitive scheme', () => {
    expect(parseBearerToken('Bearer sfat_abc-DEF_123')).toBe('sfat_abc-DEF_123');
    expect(parseBearerToken('bearer  tok/en+with=')).toBe('tok/en+with=');
  });

  it.each(['', 'Bearer', 'Bearer ', 'Basic abc', 'Bearer two tokens', 'Bearer "quoted"', 'Bearer a=b'])(
    'rejects %j',
    (header) => {
      expect(parseBearerToken(header)).toBeUndefined();
    },
  );
});

describe('scopes', () => {
  it('parses space-separated scopes, dropping duplicates and empties', () => {
    expect(parseScope('catalog:read  cart:write catalog:read')).toEqual(['catalog:read', 'cart:write']);
    expect(parseScope('')).toBeUndefined();
    expect(parseScope(undefined)).toBeUndefined();
    expect(parseScope('   ')).toBeUndefined();
  });

  it('registers the scopes asked for in canonical order, catalog:read by default', () => {
    expect(registrableScopes(['cart:write', 'catalog:read'])).toEqual(['catalog:read', 'cart:write']);
    expect(registrableScopes(undefined)).toEqual(['catalog:read']);
    expect(thrown(() => registrableScopes(['catalog:read', 'orders:write']))).toMatchObject({
      reason: 'invalid_scope',
      message: expect.stringContaining('orders:write'),
    });
  });

  it('grants the requested scopes intersected with the registered ones', () => {
    expect(grantableScopes(['catalog:read', 'cart:write'], ['catalog:read'])).toEqual(['catalog:read']);
    expect(grantableScopes(['cart:write'], ['catalog:read', 'cart:write'])).toEqual(['cart:write']);
    expect(grantableScopes(undefined, ['catalog:read', 'cart:write'])).toEqual(['catalog:read', 'cart:write']);
  });

  it('refuses an unknown scope and an empty intersection with invalid_scope', () => {
    expect(thrown(() => grantableScopes(['admin'], ['catalog:read']))).toMatchObject({ reason: 'invalid_scope' });
    expect(thrown(() => grantableScopes(['cart:write'], ['catalog:read']))).toMatchObject({ reason: 'invalid_scope' });
  });

  it('gives admin scopes only through the operator, never through registration', () => {
    for (const scope of ['admin:orders', 'admin:catalog', 'admin:promotions'])
      expect(thrown(() => registrableScopes([scope]))).toMatchObject({ reason: 'invalid_scope' });
    expect(operatorScopes(['admin:promotions', 'admin:orders', 'admin:orders'])).toEqual([
      'admin:orders',
      'admin:promotions',
    ]);
    expect(thrown(() => operatorScopes(['ADMIN:ORDERS']))).toMatchObject({ reason: 'invalid_scope' });
    expect(thrown(() => operatorScopes(undefined))).toMatchObject({ reason: 'invalid_scope' });
    expect(grantableScopes(undefined, ['admin:orders', 'catalog:read'])).toEqual(['catalog:read', 'admin:orders']);
    expect(grantableScopes(['admin:orders'], ['admin:orders', 'admin:catalog'])).toEqual(['admin:orders']);
  });

  it('checks that every required scope was granted', () => {
    expect(hasScopes(['catalog:read', 'cart:write'], ['cart:write'])).toBe(true);
    expect(hasScopes(['catalog:read'], ['catalog:read', 'cart:write'])).toBe(false);
    expect(hasScopes([], [])).toBe(true);
  });
});

describe('secrets and tokens', () => {
  it('makes prefixed, URL-safe, unique 256-bit secrets', () => {
    const secrets = new Set(Array.from({ length: 50 }, () => newSecret('sfat_')));
    expect(secrets.size).toBe(50);
    for (const secret of secrets) expect(secret).toMatch(/^sfat_[A-Za-z0-9_-]{43}$/);
  });

  it('stores a SHA-256 hash and compares against it', () => {
    const secret = newSecret('sfcs_');
    const hash = hashSecret(secret);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).not.toContain(secret.slice(5));
    expect(secretMatches(secret, hash)).toBe(true);
    expect(secretMatches(`${secret}x`, hash)).toBe(false);
    expect(secretMatches(secret, 'abcd')).toBe(false);
  });

  it('knows a token active until the instant it expires, and revoked whatever the time', () => {
    const expires_at = new Date(3_600_000);
    expect(tokenState({ expires_at, revoked_at: null }, 3_599_999)).toBe('active');
    expect(tokenState({ expires_at, revoked_at: null }, 3_600_000)).toBe('expired');
    expect(tokenState({ expires_at, revoked_at: new Date(1) }, 0)).toBe('revoked');
  });
});

describe('bearerChallenge (RFC 6750 section 3)', () => {
  const resourceMetadata = 'https://agent.example/.well-known/oauth-protected-resource';

  it('names the resource metadata, then the error and scope when there are', () => {
    expect(bearerChallenge({ resourceMetadata })).toBe(`Bearer resource_metadata="${resourceMetadata}"`);
    expect(bearerChallenge({ error: 'invalid_token', resourceMetadata })).toBe(
      `Bearer error="invalid_token", resource_metadata="${resourceMetadata}"`,
    );
    expect(bearerChallenge({ error: 'insufficient_scope', scope: 'cart:write', resourceMetadata })).toBe(
      `Bearer error="insufficient_scope", scope="cart:write", resource_metadata="${resourceMetadata}"`,
    );
  });

  it('escapes quotes and backslashes inside values', () => {
    expect(bearerChallenge({ resourceMetadata: 'a"b\\c' })).toBe('Bearer resource_metadata="a\\"b\\\\c"');
  });
});
