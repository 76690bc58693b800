// UCP 2026-08-25 beside 2026-04-08 over the real service and database: discovery at the newest version naming the
// other, every operation answered in the version the platform profile declares (each body validated against that
// version's own schemas by protocolFetch, and its `ucp.version` checked), the idempotency fingerprint of each version,
// `item.quantity_unit`, and strict negotiation that tolerates profiles without the informative `spec` / `schema` (as
// @shopify/ucp-cli 0.9.0's managed profile is) while still refusing an unusable one with what to fix.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformProfile, serveProfiles, type ProfileServer } from '../src/conformance/profile.js';
import { startTestService, type TestService } from './support/service.js';
import { cartCount, PROTOCOL_ENV, protocolBodyProblems, protocolFetch, ucpHeaders } from './support/protocols.js';

const VERSIONS = ['2026-08-25', '2026-04-08'] as const;
const TWO_PACK = 'variant_01tongue2pack';

/** A profile shaped as @shopify/ucp-cli 0.9.0's managed one: MCP only, capabilities by name and version alone. */
function managedProfile(version: string) {
  const bare = (extra: Record<string, unknown> = {}) => [{ version, ...extra }];
  return {
    ucp: {
      version,
      services: {
        'dev.ucp.shopping': [
          {
            version,
            spec: `https://ucp.dev/${version}/specification/overview`,
            transport: 'mcp',
            schema: `https://ucp.dev/${version}/services/shopping/mcp.openrpc.json`,
          },
        ],
      },
      capabilities: {
        'dev.ucp.shopping.checkout': bare(),
        'dev.ucp.shopping.fulfillment': bare({ extends: ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.cart'] }),
        'dev.ucp.shopping.buyer_consent': bare({ extends: 'dev.ucp.shopping.checkout' }),
        'dev.ucp.shopping.discount': bare({ extends: ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.cart'] }),
        'dev.ucp.shopping.cart': [
          {
            version,
            spec: `https://ucp.dev/${version}/specification/cart`,
            schema: `https://ucp.dev/${version}/schemas/shopping/cart.json`,
          },
        ],
      },
      payment_handlers: {},
    },
  };
}

/** A valid platform profile of `version` (the conformance runner's, at that version). */
function fullProfile(version: string) {
  const profile = platformProfile({ version });
  const capabilities = JSON.parse(JSON.stringify(profile.ucp.capabilities).replaceAll('2026-04-08', version));
  return { ucp: { ...profile.ucp, capabilities } };
}

let api: TestService;
let profiles: ProfileServer;
const url = (path: string) => `${profiles.base}${path}`;
beforeAll(async () => {
  const unusable = fullProfile('2026-08-25');
  unusable.ucp.capabilities['dev.ucp.shopping.checkout'] = [{ spec: 'https://ucp.dev/x', schema: 'https://ucp.dev/y' }];
  profiles = await serveProfiles({
    '/2026-08-25.json': fullProfile('2026-08-25'),
    '/2026-04-08.json': fullProfile('2026-04-08'),
    '/managed-2026-08-25.json': managedProfile('2026-08-25'),
    '/managed-2026-04-08.json': managedProfile('2026-04-08'),
    '/future.json': fullProfile('2027-01-01'),
    '/mismatched.json': {
      ucp: { ...fullProfile('2026-08-25').ucp, capabilities: fullProfile('2026-04-08').ucp.capabilities },
    },
    '/unusable.json': unusable,
  });
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
});

function send(method: string, path: string, profile: string, body?: unknown, headers: Record<string, string> = {}) {
  return protocolFetch(api, path, {
    method,
    headers: { ...ucpHeaders(url(profile)), ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

describe('UCP discovery across versions', () => {
  it('serves 2026-08-25 at /.well-known/ucp, naming the complete 2026-04-08 profile in supported_versions', async () => {
    const latest = await protocolFetch(api, '/.well-known/ucp');
    expect(latest.body.ucp.version).toBe('2026-08-25');
    // Order events are signed (test/order-events.test.ts): the public key is published as `keys[]`, never a private part.
    expect(latest.body.keys).toEqual([
      {
        kid: expect.any(String),
        kty: 'EC',
        crv: 'P-256',
        x: expect.any(String),
        y: expect.any(String),
        use: 'sig',
        alg: 'ES256',
      },
    ]);
    const olderUrl = latest.body.ucp.supported_versions['2026-04-08'];
    const older = await protocolFetch(api, new URL(olderUrl).pathname);
    expect(older.body.ucp.version).toBe('2026-04-08');
    for (const body of [latest.body, older.body]) {
      const { version } = body.ucp;
      for (const registry of ['services', 'capabilities', 'payment_handlers'])
        for (const entries of Object.values(body.ucp[registry]) as any[])
          for (const entry of entries) expect(entry.version, `${version} ${registry}`).toBe(version);
    }
  });
});

describe.each(VERSIONS)('UCP %s checkout', (version) => {
  const profile = `/${version}.json`;
  const expectVersion = (body: any) => expect(body.ucp.version).toBe(version);

  it('create, get, update, complete and cancel are answered in the profile version', async () => {
    const created = await send('POST', '/ucp/checkout-sessions', profile, {
      line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
      discounts: { codes: ['10OFF'] },
    });
    expect(created.response.status).toBe(201);
    expectVersion(created.body);
    expect(created.body.ucp.capabilities['dev.ucp.shopping.checkout']).toEqual([{ version }]);
    const path = `/ucp/checkout-sessions/${created.body.id}`;
    const got = await send('GET', path, profile);
    expect(got.response.status).toBe(200);
    expectVersion(got.body);
    const updated = await send('PUT', path, profile, { line_items: [{ item: { id: TWO_PACK }, quantity: 3 }] });
    expect([updated.response.status, updated.body.line_items[0].quantity]).toEqual([200, 3]);
    expectVersion(updated.body);
    const completed = await send('POST', `${path}/complete`, profile, { payment: {} });
    expect([completed.response.status, completed.body.status]).toEqual([200, 'requires_escalation']);
    expectVersion(completed.body);
    const canceled = await send('POST', `${path}/cancel`, profile);
    expect([canceled.response.status, canceled.body.status]).toEqual([200, 'canceled']);
    expectVersion(canceled.body);
    const missing = await send('GET', '/ucp/checkout-sessions/cart_nope', profile);
    expect([missing.body.ucp.status, missing.body.messages[0].code]).toEqual(['error', 'not_found']);
    expectVersion(missing.body);
  });

  it("the idempotency fingerprint is the version's: raw bytes in 2026-08-25, RFC 8785 JSON in 2026-04-08", async () => {
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await send(
      'POST',
      '/ucp/checkout-sessions',
      profile,
      '{"line_items":[{"item":{"id":"variant_01tongue2pack"},"quantity":2}]}',
      headers,
    );
    expect(first.response.status).toBe(201);
    const before = await cartCount(api);
    const same = await send(
      'POST',
      '/ucp/checkout-sessions',
      profile,
      '{"line_items":[{"item":{"id":"variant_01tongue2pack"},"quantity":2}]}',
      headers,
    );
    expect([same.response.status, same.response.headers.get('idempotent-replayed'), same.text]).toEqual([
      201,
      'true',
      first.text,
    ]);
    // The same JSON in other bytes (keys reordered, 2.0 for 2).
    const reordered = await send(
      'POST',
      '/ucp/checkout-sessions',
      profile,
      '{"line_items":[{"quantity":2.0,"item":{"id":"variant_01tongue2pack"}}]}',
      headers,
    );
    if (version === '2026-08-25') {
      expect([reordered.response.status, reordered.body.code]).toEqual([409, 'idempotency_conflict']);
    } else {
      expect([reordered.response.status, reordered.text]).toEqual([201, first.text]);
    }
    expect(await cartCount(api)).toBe(before);
  });

  it('item.quantity_unit: 2026-08-25 refuses a unit the store does not sell in (recoverable); 2026-04-08 has no such field', async () => {
    const before = await cartCount(api);
    const kilograms = { unit: 'KGM', scale: 0, display_text: 'kg' };
    const refused = await send('POST', '/ucp/checkout-sessions', profile, {
      line_items: [
        { item: { id: TWO_PACK }, quantity: 1 },
        { item: { id: TWO_PACK, quantity_unit: kilograms }, quantity: 2 },
      ],
    });
    expectVersion(refused.body);
    if (version === '2026-08-25') {
      expect(refused.response.status).toBe(200);
      expect(refused.body.ucp.status).toBe('error');
      expect(refused.body.messages).toEqual([
        expect.objectContaining({
          type: 'error',
          code: 'quantity_unit_unsupported',
          severity: 'recoverable',
          path: '$.line_items[1].item.quantity_unit',
        }),
      ]);
      expect(await cartCount(api)).toBe(before);
      const each = await send('POST', '/ucp/checkout-sessions', profile, {
        line_items: [{ item: { id: TWO_PACK, quantity_unit: { unit: 'C62', display_text: 'each' } }, quantity: 2 }],
      });
      expect([each.response.status, each.body.line_items[0].quantity]).toEqual([201, 2]);
      const path = `/ucp/checkout-sessions/${each.body.id}`;
      const unchanged = await send('PUT', path, profile, {
        line_items: [{ item: { id: TWO_PACK, quantity_unit: kilograms }, quantity: 5 }],
      });
      expect(unchanged.response.status).toBe(200);
      expect(unchanged.body.line_items[0].quantity).toBe(2);
      expect(unchanged.body.messages.map((m: any) => [m.code, m.severity, m.path])).toContainEqual([
        'quantity_unit_unsupported',
        'recoverable',
        '$.line_items[0].item.quantity_unit',
      ]);
      const invalid = await send('POST', '/ucp/checkout-sessions', profile, {
        line_items: [
          { item: { id: TWO_PACK, quantity_unit: { unit: 'C62', scale: 2, display_text: 'x' } }, quantity: 1 },
        ],
      });
      expect([invalid.response.status, invalid.body.code]).toEqual([400, 'invalid_request']);
    } else {
      expect(refused.response.status).toBe(201);
      expect(refused.body.line_items.map((line: any) => line.quantity)).toEqual([3]);
    }
  });

  it("a profile shaped like @shopify/ucp-cli 0.9.0's managed one (no spec/schema on capabilities) passes strict negotiation", async () => {
    const created = await send('POST', '/ucp/checkout-sessions', `/managed-${version}.json`, {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
      discounts: { codes: ['10OFF'] },
    });
    expect(created.response.status).toBe(201);
    expectVersion(created.body);
    expect(created.body.discounts.applied[0].code).toBe('10OFF');
    const info = created.body.messages.find((m: any) => m.code === 'profile_informative_fields_missing');
    expect(info).toMatchObject({ type: 'info' });
    expect(info.content).toContain("$.ucp.capabilities['dev.ucp.shopping.checkout'][0].spec");
  });
});

/** A tools/call on /ucp/mcp; a result's checkout is validated against the schemas of the version it says it is in. */
async function mcpCall(name: string, args: Record<string, unknown>) {
  const response = await api.http('/ucp/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const body = (await response.json()) as any;
  const checkout = body.result?.structuredContent;
  if (checkout) expect(protocolBodyProblems('/ucp/checkout-sessions', 200, checkout)).toEqual([]);
  return checkout;
}

describe.each(VERSIONS)(
  'UCP %s over MCP, with the managed-shaped profile (MCP only, as @shopify/ucp-cli)',
  (version) => {
    it('create, get, update, complete and cancel are answered in the version of meta["ucp-agent"]\'s profile', async () => {
      const meta = (extra: Record<string, unknown> = {}) => ({
        'ucp-agent': { profile: url(`/managed-${version}.json`) },
        ...extra,
      });
      const keyed = () => meta({ 'idempotency-key': randomUUID() });
      const created = await mcpCall('create_checkout', {
        meta: keyed(),
        checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
      });
      expect([created.ucp.version, created.status]).toEqual([version, 'requires_escalation']);
      const { id } = created;
      expect((await mcpCall('get_checkout', { meta: meta(), id })).ucp.version).toBe(version);
      const updated = await mcpCall('update_checkout', {
        meta: keyed(),
        id,
        checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 2 }] },
      });
      expect([updated.ucp.version, updated.line_items[0].quantity]).toEqual([version, 2]);
      const completed = await mcpCall('complete_checkout', { meta: keyed(), id, checkout: { payment: {} } });
      expect(completed.ucp.version).toBe(version);
      const canceled = await mcpCall('cancel_checkout', { meta: keyed(), id });
      expect([canceled.ucp.version, canceled.status]).toEqual([version, 'canceled']);
    });
  },
);

describe('UCP negotiation across versions', () => {
  it('a version this business does not serve is 422 version_unsupported naming the versions it does', async () => {
    const before = await cartCount(api);
    const refused = await send('POST', '/ucp/checkout-sessions', '/future.json', {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
    });
    expect([refused.response.status, refused.body.code]).toEqual([422, 'version_unsupported']);
    expect(refused.body.content).toContain('2026-08-25 and 2026-04-08');
    expect(await cartCount(api)).toBe(before);
  });

  it('a 2026-08-25 profile declaring checkout only at 2026-04-08 is capabilities_incompatible, in 2026-08-25', async () => {
    const refused = await send('POST', '/ucp/checkout-sessions', '/mismatched.json', {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
    });
    expect(refused.response.status).toBe(200);
    expect([refused.body.ucp.version, refused.body.messages[0].code]).toEqual([
      '2026-08-25',
      'capabilities_incompatible',
    ]);
  });

  it('a profile still invalid once informative fields are tolerated is 422 profile_malformed naming what to fix', async () => {
    const refused = await send('POST', '/ucp/checkout-sessions', '/unusable.json', {
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
    });
    expect([refused.response.status, refused.body.code]).toEqual([422, 'profile_malformed']);
    expect(refused.body.content).toContain("$.ucp.capabilities['dev.ucp.shopping.checkout'][0]");
    expect(refused.body.content).toContain('version');
  });
});
