// An off-the-shelf OAuth client drives the whole agent flow without knowing our code: openid-client discovers the
// authorization server (RFC 8414, algorithm 'oauth2'), registers dynamically (RFC 7591), gets a client_credentials
// token, calls a protected endpoint, revokes the token (RFC 7009) and sees the next call refused. Every response it
// receives is validated against the contract.
import { createServer, type AddressInfo } from 'node:net';
import * as oauth from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractFetch } from './support/contract.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let issuer: URL;

/** The issuer must equal AGENT_BASE_URL exactly, so the port is chosen before the service starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const port = await freePort();
  issuer = new URL(`http://127.0.0.1:${port}`);
  api = await startTestService({ env: { PORT: String(port), AGENT_BASE_URL: issuer.origin } });
});
afterAll(async () => {
  await api?.close();
});

/** Every request the library makes, in order, as `METHOD /path`. */
const requests: string[] = [];

const options: oauth.DynamicClientRegistrationRequestOptions = {
  algorithm: 'oauth2',
  execute: [oauth.allowInsecureRequests], // plain http on the loopback interface in tests only
  [oauth.customFetch]: (url, init) => {
    requests.push(`${init.method} ${new URL(url).pathname}`);
    return contractFetch(url, init);
  },
};

const metadata = {
  client_name: 'openid-client e2e',
  scope: 'catalog:read cart:write',
  grant_types: ['client_credentials'],
};

async function catalogCall(config: oauth.Configuration, accessToken: string): Promise<Response> {
  return oauth.fetchProtectedResource(config, accessToken, new URL('/agent/products?q=travel', issuer), 'GET');
}

describe('openid-client against the agent surface', () => {
  it('discovers, registers, gets a token, calls, revokes (client_secret_basic)', async () => {
    requests.length = 0;
    const config = await oauth.dynamicClientRegistration(issuer, metadata, oauth.ClientSecretBasic(), options);
    const server = config.serverMetadata();
    expect(server.issuer).toBe(issuer.origin);
    expect(server.token_endpoint).toBe(`${issuer.origin}/oauth/token`);
    expect(config.clientMetadata().client_secret).toMatch(/^sfcs_/);

    const tokens = await oauth.clientCredentialsGrant(config, { scope: 'catalog:read' });
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'catalog:read' });
    expect(tokens.refresh_token).toBeUndefined();

    const response = await catalogCall(config, tokens.access_token);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { products: { handle: string }[] };
    expect(body.products.map((product) => product.handle)).toEqual(['tongue-scraper-2-pack-travel-cases']);

    await oauth.tokenRevocation(config, tokens.access_token);
    const refused = await catalogCall(config, tokens.access_token).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const challenge = (refused as oauth.WWWAuthenticateChallengeError).cause[0]!;
    expect(challenge).toMatchObject({
      scheme: 'bearer',
      parameters: {
        error: 'invalid_token',
        resource_metadata: `${issuer.origin}/.well-known/oauth-protected-resource`,
      },
    });
    expect(requests).toEqual([
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/register',
      'POST /oauth/token',
      'GET /agent/products',
      'POST /oauth/revoke',
      'GET /agent/products',
    ]);
  });

  it('works with the library defaults too (client_secret_post), and reports a scope it lacks', async () => {
    const config = await oauth.dynamicClientRegistration(
      issuer,
      { ...metadata, scope: 'cart:write' },
      undefined,
      options,
    );
    const tokens = await oauth.clientCredentialsGrant(config);
    expect(tokens.scope).toBe('cart:write');
    const refused = await catalogCall(config, tokens.access_token).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect((refused as oauth.WWWAuthenticateChallengeError).cause[0]).toMatchObject({
      scheme: 'bearer',
      parameters: { error: 'insufficient_scope', scope: 'catalog:read' },
    });
    await oauth.tokenRevocation(config, tokens.access_token);
  });

  it('surfaces invalid_scope and unsupported grants as OAuth errors', async () => {
    const config = await oauth.dynamicClientRegistration(
      issuer,
      { ...metadata, scope: 'catalog:read' },
      oauth.ClientSecretBasic(),
      options,
    );
    await expect(oauth.clientCredentialsGrant(config, { scope: 'cart:write' })).rejects.toMatchObject({
      error: 'invalid_scope',
      status: 400,
    });
    await expect(oauth.refreshTokenGrant(config, 'sfat_not-a-refresh-token')).rejects.toMatchObject({
      error: 'unsupported_grant_type',
      status: 400,
    });
  });
});
