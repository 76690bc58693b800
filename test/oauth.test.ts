// The OAuth 2.0 authorization server and bearer authentication of /agent over real HTTP: discovery metadata, the guide,
// registration, the client_credentials grant, scopes, revocation, expiry on a controllable clock, every row of the
// spec's authentication error table, and rate limiting by client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, bearer, form, registerClient, requestToken, type RegisteredClient } from './support/agent.js';
import { startTestService, type TestService } from './support/service.js';

const AGENT = 'https://agent.storefront.test';
const BASE = 'https://storefront.test';
const RESOURCE_METADATA = `${AGENT}/.well-known/oauth-protected-resource`;
const START = Date.parse('2026-07-16T12:00:00Z');

let api: TestService;
let clock = START;
beforeAll(async () => {
  api = await startTestService({ env: { AGENT_BASE_URL: AGENT, BASE_URL: BASE }, now: () => clock });
});
afterAll(async () => {
  await api?.close();
});

async function json(path: string, init?: RequestInit): Promise<{ status: number; body: any; response: Response }> {
  const response = await api.http(path, init);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, response };
}

function post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const request = form(fields);
  return json(path, { method: 'POST', body: request.body, headers: { ...request.headers, ...headers } });
}

const tokenRequest = (
  client: RegisteredClient,
  fields: Record<string, string> = { grant_type: 'client_credentials' },
) => post('/oauth/token', fields, { Authorization: basicAuth(client.client_id, client.client_secret) });

const revoke = (client: RegisteredClient, token: string) =>
  post('/oauth/revoke', { token }, { Authorization: basicAuth(client.client_id, client.client_secret) });

const products = (headers: Record<string, string> = {}, query = '') => json(`/agent/products${query}`, { headers });

describe('discovery', () => {
  it('publishes RFC 8414 metadata with the issuer exactly AGENT_BASE_URL and the agent_auth block', async () => {
    const { status, body, response } = await json('/.well-known/oauth-authorization-server');
    expect(status).toBe(200);
    expect(body).toEqual({
      issuer: AGENT,
      token_endpoint: `${AGENT}/oauth/token`,
      registration_endpoint: `${AGENT}/oauth/register`,
      revocation_endpoint: `${AGENT}/oauth/revoke`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['catalog:read', 'cart:write', 'orders:read'],
      response_types_supported: [],
      service_documentation: `${BASE}/docs`,
      agent_auth: {
        skill: `${AGENT}/oauth/skill.md`,
        register_uri: `${AGENT}/oauth/register`,
        revocation_uri: `${AGENT}/oauth/revoke`,
        identity_types_supported: ['anonymous'],
        anonymous: { credential_types_supported: ['client_credentials'] },
      },
    });
    expect(body.agent_auth).not.toHaveProperty('claim_uri');
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const again = await api.http('/.well-known/oauth-authorization-server', {
      headers: { 'If-None-Match': response.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
  });

  it('publishes RFC 9728 metadata for the /agent resource', async () => {
    const { status, body } = await json('/.well-known/oauth-protected-resource');
    expect(status).toBe(200);
    expect(body).toEqual({
      resource: AGENT,
      resource_name: 'Storefront agent API',
      authorization_servers: [AGENT],
      scopes_supported: ['catalog:read', 'cart:write', 'orders:read'],
      bearer_methods_supported: ['header'],
      resource_documentation: `${AGENT}/oauth/skill.md`,
    });
  });

  it('serves the Markdown guide without auth, with front matter and this deployment’s URLs', async () => {
    const response = await api.http('/oauth/skill.md');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    const guide = await response.text();
    const frontMatter = /^---\nname: (\S+)\ndescription: (.+)\n---\n/.exec(guide);
    expect(frontMatter?.[1]).toBe('storefront-agent-auth');
    expect(frontMatter?.[2]).toContain('client_credentials');
    expect(guide).not.toContain('{{');
    for (const step of [
      `curl -sS -X POST '${AGENT}/oauth/register'`,
      `'${AGENT}/oauth/token'`,
      `'${AGENT}/agent/products`,
      `'${AGENT}/oauth/revoke'`,
    ]) {
      expect(guide).toContain(step);
    }
  });

  it('answers unknown /oauth and /.well-known paths and wrong methods in the OAuth error shape', async () => {
    for (const path of ['/oauth/authorize', '/.well-known/openid-configuration', '/oauth']) {
      const { status, body } = await json(path);
      expect(status).toBe(404);
      expect(body.error).toBe('unknown_endpoint');
    }
    const wrongMethod = await json('/oauth/token');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.response.headers.get('allow')).toBe('POST');
    expect(wrongMethod.body.error).toBe('method_not_allowed');
  });
});

describe('POST /oauth/register', () => {
  it('registers a client: 201, the secret shown once, only its hash stored', async () => {
    const { status, body, response } = await json('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Test agent',
        scope: 'cart:write catalog:read',
        grant_types: ['client_credentials'],
        software_id: 'ignored',
      }),
    });
    expect(status).toBe(201);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(body).toEqual({
      client_id: expect.stringMatching(/^client_/),
      client_secret: expect.stringMatching(/^sfcs_[A-Za-z0-9_-]{43}$/),
      client_id_issued_at: START / 1000,
      client_secret_expires_at: 0,
      client_name: 'Test agent',
      scope: 'catalog:read cart:write',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
      token_endpoint: `${AGENT}/oauth/token`,
    });
    const stored = await api.service.deps.db('oauth_clients').where({ id: body.client_id }).first();
    expect(JSON.stringify(stored)).not.toContain(body.client_secret);
    expect(JSON.stringify(stored)).not.toContain(body.client_secret.slice(5));
  });

  it('defaults to catalog:read, client_credentials and client_secret_basic', async () => {
    const { body } = await json('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(body).toMatchObject({
      scope: 'catalog:read',
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    expect(body).not.toHaveProperty('client_name');
  });

  it('records client_secret_post when asked', async () => {
    const client = await registerClient(api, { token_endpoint_auth_method: 'client_secret_post' });
    expect(client).toMatchObject({ token_endpoint_auth_method: 'client_secret_post' });
  });

  it.each([
    ['an unknown scope', { scope: 'catalog:read orders:write' }, 'invalid_scope', 'orders:write'],
    [
      'another grant',
      { grant_types: ['client_credentials', 'authorization_code'] },
      'invalid_client_metadata',
      'authorization_code',
    ],
    ['no grant at all', { grant_types: [] }, 'invalid_client_metadata', 'client_credentials'],
    [
      'an unsupported auth method',
      { token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
      'private_key_jwt',
    ],
    ['a mistyped field', { client_name: 42 }, 'invalid_request', 'client_name'],
  ])('rejects %s with 400', async (_why, metadata, error, mentioned) => {
    const { status, body } = await json('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(metadata),
    });
    expect(status).toBe(400);
    expect(body.error).toBe(error);
    expect(body.error_description).toContain(mentioned);
  });

  it('rejects malformed JSON and a form body with 400 invalid_request', async () => {
    const malformed = await json('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"scope":',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toBe('invalid_request');
    const asForm = await post('/oauth/register', { scope: 'catalog:read' });
    expect(asForm.status).toBe(400);
    expect(asForm.body.error).toBe('invalid_request');
  });

  it('rejects a body over 100 kB with 413', async () => {
    const { status, body } = await json('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ padding: 'x'.repeat(110_000) }),
    });
    expect(status).toBe(413);
    expect(body.error).toBe('payload_too_large');
  });
});

describe('POST /oauth/token', () => {
  let client: RegisteredClient;
  beforeAll(async () => {
    client = await registerClient(api, { scope: 'catalog:read cart:write' });
  });

  it('issues an opaque one-hour bearer token for the whole registered scope, not cached, stored hashed', async () => {
    const { status, body, response } = await tokenRequest(client);
    expect(status).toBe(200);
    expect(body).toEqual({
      access_token: expect.stringMatching(/^sfat_[A-Za-z0-9_-]{43}$/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'catalog:read cart:write',
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
    const rows = await api.service.deps.db('oauth_tokens').where({ client_id: client.client_id });
    expect(JSON.stringify(rows)).not.toContain(body.access_token.slice(5));
    expect((await products(bearer(body.access_token))).status).toBe(200);
  });

  it('grants the requested scope intersected with the registered one', async () => {
    expect((await tokenRequest(client, { grant_type: 'client_credentials', scope: 'catalog:read' })).body.scope).toBe(
      'catalog:read',
    );
    const readOnly = await registerClient(api, { scope: 'catalog:read' });
    const { status, body } = await tokenRequest(readOnly, {
      grant_type: 'client_credentials',
      scope: 'catalog:read cart:write',
    });
    expect(status).toBe(200);
    expect(body.scope).toBe('catalog:read');
  });

  it.each([
    ['an unknown scope', 'catalog:read admin', 'admin'],
    ['a scope the client did not register', 'cart:write', 'catalog:read'],
  ])('answers 400 invalid_scope to %s', async (_why, scope, mentioned) => {
    const readOnly = await registerClient(api, { scope: 'catalog:read' });
    const { status, body } = await tokenRequest(readOnly, { grant_type: 'client_credentials', scope });
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_scope');
    expect(body.error_description).toContain(mentioned);
  });

  it('accepts form-encoded Basic credentials (RFC 6749 section 2.3.1)', async () => {
    const percentEncoded = [...client.client_secret]
      .map((char) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`)
      .join('');
    const authorization = `Basic ${Buffer.from(`${client.client_id}:${percentEncoded}`).toString('base64')}`;
    const { status } = await post(
      '/oauth/token',
      { grant_type: 'client_credentials' },
      { Authorization: authorization },
    );
    expect(status).toBe(200);
  });

  it('accepts client_secret_post, and refuses two methods at once', async () => {
    const viaBody = await post('/oauth/token', {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret,
    });
    expect(viaBody.status).toBe(200);
    const both = await tokenRequest(client, { grant_type: 'client_credentials', client_secret: client.client_secret });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe('invalid_request');
  });

  it.each([
    ['a wrong secret', () => basicAuth(client.client_id, `${client.client_secret}x`)],
    ['an unknown client', () => basicAuth('client_nobody', client.client_secret)],
    ['another client’s secret', () => basicAuth(client.client_id, 'sfcs_' + 'A'.repeat(43))],
    ['a malformed Basic header', () => 'Basic not-base64!'],
    ['no credentials at all', () => ''],
  ])('answers 401 invalid_client with a Basic challenge to %s', async (_why, authorization) => {
    const header = authorization();
    const { status, body, response } = await post(
      '/oauth/token',
      { grant_type: 'client_credentials' },
      header ? { Authorization: header } : {},
    );
    expect(status).toBe(401);
    expect(body.error).toBe('invalid_client');
    expect(response.headers.get('www-authenticate')).toMatch(/^Basic realm="agent"/);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('rejects a wrong client_secret sent in the body too', async () => {
    const { status, body } = await post('/oauth/token', {
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: 'nope',
    });
    expect(status).toBe(401);
    expect(body.error).toBe('invalid_client');
  });

  it.each([
    ['authorization_code', { code: 'abc', redirect_uri: 'https://agent.example/cb' }],
    ['refresh_token', { refresh_token: 'abc' }],
    ['password', { username: 'a', password: 'b' }],
    // ID-JAG: an identity assertion presented as a JWT bearer grant, or exchanged at the token endpoint.
    ['urn:ietf:params:oauth:grant-type:jwt-bearer', { assertion: 'eyJhbGciOiJSUzI1NiJ9.e30.sig' }],
    [
      'urn:ietf:params:oauth:grant-type:token-exchange',
      {
        subject_token: 'eyJ.e30.sig',
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      },
    ],
  ])(
    'answers 400 unsupported_grant_type to grant_type=%s, with or without client credentials',
    async (grantType, extra) => {
      for (const authorization of [basicAuth(client.client_id, client.client_secret), undefined]) {
        const { status, body } = await post(
          '/oauth/token',
          { grant_type: grantType, ...extra },
          authorization ? { Authorization: authorization } : {},
        );
        expect(status).toBe(400);
        expect(body.error).toBe('unsupported_grant_type');
      }
    },
  );

  it('answers 400 invalid_request to a missing grant_type, a repeated parameter and a JSON body', async () => {
    const missing = await tokenRequest(client, { scope: 'catalog:read' });
    expect([missing.status, missing.body.error]).toEqual([400, 'invalid_request']);
    const repeated = await json('/oauth/token', {
      method: 'POST',
      body: 'grant_type=client_credentials&scope=catalog:read&scope=cart:write',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: basicAuth(client.client_id, client.client_secret),
      },
    });
    expect([repeated.status, repeated.body.error]).toEqual([400, 'invalid_request']);
    const asJson = await json('/oauth/token', {
      method: 'POST',
      body: JSON.stringify({ grant_type: 'client_credentials' }),
      headers: { 'Content-Type': 'application/json', Authorization: basicAuth(client.client_id, client.client_secret) },
    });
    expect([asJson.status, asJson.body.error]).toEqual([400, 'invalid_request']);
  });

  it('ignores unknown form parameters (RFC 6749 section 3.2)', async () => {
    const { status } = await tokenRequest(client, {
      grant_type: 'client_credentials',
      audience: 'whatever',
      resource: AGENT,
    });
    expect(status).toBe(200);
  });

  it('issues no refresh token: each grant is a new, independent token', async () => {
    const first = await tokenRequest(client);
    const second = await tokenRequest(client);
    expect(first.body).not.toHaveProperty('refresh_token');
    expect(second.body.access_token).not.toBe(first.body.access_token);
    expect((await products(bearer(first.body.access_token))).status).toBe(200);
    expect((await products(bearer(second.body.access_token))).status).toBe(200);
  });
});

describe('POST /oauth/revoke', () => {
  let issuer: RegisteredClient;
  let other: RegisteredClient;
  beforeAll(async () => {
    issuer = await registerClient(api);
    other = await registerClient(api);
  });

  it('revokes the issuer’s token: 200, no body, and the very next request is refused', async () => {
    const token = await requestToken(api, issuer);
    expect((await products(bearer(token))).status).toBe(200);
    const { status, response, body } = await revoke(issuer, token);
    expect(status).toBe(200);
    expect(body).toBeUndefined();
    expect(response.headers.get('cache-control')).toBe('no-store');
    const after = await products(bearer(token));
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('invalid_token');
    expect((await revoke(issuer, token)).status).toBe(200);
  });

  it('answers 200 to another client but leaves the token valid', async () => {
    const token = await requestToken(api, issuer);
    expect((await revoke(other, token)).status).toBe(200);
    expect((await products(bearer(token))).status).toBe(200);
  });

  it('answers 200 to an unknown token, and leaves the client’s other tokens alone', async () => {
    const token = await requestToken(api, issuer);
    expect((await revoke(issuer, 'sfat_unknown')).status).toBe(200);
    expect((await products(bearer(token))).status).toBe(200);
  });

  it('accepts client_secret_post', async () => {
    const token = await requestToken(api, issuer);
    expect(
      (await post('/oauth/revoke', { token, client_id: issuer.client_id, client_secret: issuer.client_secret })).status,
    ).toBe(200);
    expect((await products(bearer(token))).status).toBe(401);
  });

  it('answers 401 invalid_client without valid client credentials, and revokes nothing', async () => {
    const token = await requestToken(api, issuer);
    const anonymous = await post('/oauth/revoke', { token });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe('invalid_client');
    expect(anonymous.response.headers.get('www-authenticate')).toMatch(/^Basic /);
    const wrong = await post('/oauth/revoke', { token }, { Authorization: basicAuth(issuer.client_id, 'wrong') });
    expect(wrong.status).toBe(401);
    expect((await products(bearer(token))).status).toBe(200);
  });

  it('answers 400 invalid_request without a token', async () => {
    const { status, body } = await post(
      '/oauth/revoke',
      { token_type_hint: 'access_token' },
      { Authorization: basicAuth(issuer.client_id, issuer.client_secret) },
    );
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_request');
  });
});

describe('expiry', () => {
  it('accepts a token for exactly one hour of the service clock', async () => {
    const token = await requestToken(api, await registerClient(api));
    try {
      clock = START + 3_600_000 - 1;
      expect((await products(bearer(token))).status).toBe(200);
      clock = START + 3_600_000;
      const expired = await products(bearer(token));
      expect(expired.status).toBe(401);
      expect(expired.body.error).toBe('invalid_token');
      expect(expired.response.headers.get('www-authenticate')).toBe(
        `Bearer error="invalid_token", resource_metadata="${RESOURCE_METADATA}"`,
      );
    } finally {
      clock = START;
    }
  });
});

describe('bearer authentication of /agent (the spec’s error table)', () => {
  let readToken: string;
  let cartOnlyToken: string;
  beforeAll(async () => {
    const client = await registerClient(api, { scope: 'catalog:read cart:write' });
    readToken = await requestToken(api, client, 'catalog:read');
    cartOnlyToken = await requestToken(api, client, 'cart:write');
  });

  it('401 unauthorized without an Authorization header, with the resource_metadata challenge', async () => {
    const { status, body, response } = await products();
    expect(status).toBe(401);
    expect(body.error).toBe('unauthorized');
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${RESOURCE_METADATA}"`);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it.each([
    ['an unknown token', () => bearer('sfat_' + 'x'.repeat(43))],
    ['a malformed bearer header', () => ({ Authorization: 'Bearer two words' })],
    ['an empty bearer header', () => ({ Authorization: 'Bearer' })],
    ['another scheme', () => ({ Authorization: 'Basic YTpi' })],
  ])('401 invalid_token for %s', async (_why, headers) => {
    const { status, body, response } = await products(headers());
    expect(status).toBe(401);
    expect(body.error).toBe('invalid_token');
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${RESOURCE_METADATA}"`,
    );
  });

  it('403 insufficient_scope naming the scope the operation declares', async () => {
    const { status, body, response } = await products(bearer(cartOnlyToken));
    expect(status).toBe(403);
    expect(body).toMatchObject({ error: 'insufficient_scope', scope: 'catalog:read' });
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="catalog:read", resource_metadata="${RESOURCE_METADATA}"`,
    );
  });

  it('checks authentication and scope before the request itself', async () => {
    expect((await products({}, '?limit=0')).body.error).toBe('unauthorized');
    expect((await products(bearer('sfat_nope'), '?limit=0&bogus=1')).body.error).toBe('invalid_token');
    expect((await products(bearer(cartOnlyToken), '?limit=0')).body.error).toBe('insufficient_scope');
    expect((await products(bearer(readToken), '?limit=0')).body.error).toBe('invalid_request');
  });

  it('404 unknown_endpoint for any unknown /agent path, with or without a token', async () => {
    for (const headers of [{}, bearer(readToken), bearer('sfat_nope')]) {
      for (const path of ['/agent', '/agent/orders', '/agent/products/a/b']) {
        const { status, body, response } = await json(path, { headers });
        expect(status).toBe(404);
        expect(body.error).toBe('unknown_endpoint');
        expect(response.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
      }
    }
  });

  it('405 with Allow for a wrong method on an agent path', async () => {
    const { status, body, response } = await json('/agent/products', { method: 'DELETE', headers: bearer(readToken) });
    expect(status).toBe(405);
    expect(body.error).toBe('method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('rate limits on the agent surface', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({
      env: { RATE_LIMIT_PER_MINUTE: '8', REGISTRATIONS_PER_HOUR: '2', TRUST_PROXY: 'true' },
    });
  });
  afterAll(async () => {
    await limited?.close();
  });

  const remaining = (response: Response) => Number(response.headers.get('ratelimit-remaining'));
  const from = (address: string, token?: string) => ({ 'X-Forwarded-For': address, ...(token ? bearer(token) : {}) });
  const register = (address: string) =>
    limited.http('/oauth/register', {
      method: 'POST',
      headers: { ...from(address), 'Content-Type': 'application/json' },
      body: JSON.stringify({ scope: 'catalog:read' }),
    });
  async function tokenFor(address: string): Promise<string> {
    const client = (await (await register(address)).json()) as RegisteredClient;
    const request = form({ grant_type: 'client_credentials' });
    const response = await limited.http('/oauth/token', {
      method: 'POST',
      body: request.body,
      headers: {
        ...request.headers,
        ...from(address),
        Authorization: basicAuth(client.client_id, client.client_secret),
      },
    });
    return ((await response.json()) as { access_token: string }).access_token;
  }

  it('limits registrations per address on their own budget, with Retry-After', async () => {
    expect([(await register('10.1.0.1')).status, (await register('10.1.0.1')).status]).toEqual([201, 201]);
    const third = await register('10.1.0.1');
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(60); // the hourly window, not the minute's
    expect(((await third.json()) as { error: string }).error).toBe('rate_limited');
    // The address may still read: only registrations are spent.
    expect((await limited.http('/.well-known/oauth-authorization-server', { headers: from('10.1.0.1') })).status).toBe(
      200,
    );
    expect((await register('10.1.0.2')).status).toBe(201);
  });

  it("counts a bearer request against its address and its client: more clients do not multiply an address's budget", async () => {
    const first = await tokenFor('10.2.0.1');
    const second = await tokenFor('10.2.0.2');

    const calls = [];
    for (let i = 0; i < 8; i++) calls.push(await limited.http('/agent/regions', { headers: from('10.2.0.3', first) }));
    expect(calls.map((response) => response.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200]);
    expect(calls.map(remaining)).toEqual([7, 6, 5, 4, 3, 2, 1, 0]);
    const over = await limited.http('/agent/regions', { headers: from('10.2.0.3', first) });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await over.json()) as { error: string }).error).toBe('rate_limited');

    // Another client from the same address is refused: the address has spent its budget.
    expect((await limited.http('/agent/regions', { headers: from('10.2.0.3', second) })).status).toBe(429);
    // The first client is refused from any address: it has spent its own.
    expect((await limited.http('/agent/regions', { headers: from('10.2.0.4', first) })).status).toBe(429);
    const other = await limited.http('/agent/regions', { headers: from('10.2.0.4', second) });
    expect([other.status, remaining(other)]).toEqual([200, 6]);
  });

  it('counts invalid tokens and unknown agent paths against the address', async () => {
    const token = await tokenFor('10.3.0.1');
    const invalid = await limited.http('/agent/regions', { headers: from('10.3.0.2', 'sfat_nope') });
    expect([invalid.status, remaining(invalid)]).toEqual([401, 7]);
    const unknownPath = await limited.http('/agent/nope', { headers: from('10.3.0.2', token) });
    expect([unknownPath.status, remaining(unknownPath)]).toEqual([404, 6]);
  });
});
