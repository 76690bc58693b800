// Generated garbage against every write endpoint and odd queries and paths against every read endpoint: never a
// 5xx, always a documented status and shape (contractFetch checks it; the ACP/UCP bindings' bodies also against the
// protocol's own schemas), the process stays up, and a failed request leaves every stored row exactly as it was.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import {
  expectHarmless,
  hostileBody as body,
  hostileBodyWith,
  hostileContentType as contentType,
  hostileHeaderValue,
  hostileString,
  hostileValue,
  hostileValueWith,
  sqlish,
  storedDataGuard,
  unstorableString,
} from './support/hostile.js';
import { PROTOCOL_ENV, protocolBodyProblems, startProfileServer, type ProfileServer } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

const TWO_PACK = 'variant_01tongue2pack';
let api: TestService;
let profiles: ProfileServer;
let cartPath: string;
let authorization: { Authorization: string };
let acpAuthorization: { Authorization: string };
let readOnlyAuthorization: { Authorization: string };
/** Sessions the protocol properties change (one to cancel, one for everything else), per binding. */
const sessions = { ucp: '', ucpCancel: '', acp: '', acpCancel: '' };
beforeAll(async () => {
  profiles = await startProfileServer();
  api = await startTestService({ env: PROTOCOL_ENV });
  authorization = bearer(await agentToken(api, 'catalog:read cart:write'));
  acpAuthorization = bearer(await agentToken(api, 'cart:write'));
  readOnlyAuthorization = bearer(await agentToken(api, 'catalog:read'));
  const cart = await api.http('/agent/carts', {
    method: 'POST',
    headers: { ...authorization, 'Content-Type': 'application/json' },
    body: JSON.stringify({ items: [{ id: TWO_PACK }] }),
  });
  cartPath = `/agent/carts/${((await cart.json()) as { id: string }).id}`;
  for (const name of Object.keys(sessions) as (keyof typeof sessions)[]) {
    const created = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: [{ id: TWO_PACK, quantity: 1 }] }),
    });
    sessions[name] = ((await created.json()) as { id: string }).id;
  }
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
});

const writeEndpoints = [
  '/checkout_sessions',
  '/checkout-sessions',
  '/checkout_sessions/cart_nope/complete',
  '/checkout_sessions/cart_nope/cancel',
  '/oauth/register',
  '/oauth/token',
  '/oauth/revoke',
];

describe('hostile input', () => {
  it.each(writeEndpoints)('POST %s never answers 5xx and never changes stored data when it fails', async (path) => {
    const guarded = storedDataGuard(api.service.deps.db);
    await fc.assert(
      fc.asyncProperty(body, contentType, async (payload, type) => {
        const response = await guarded(() =>
          api.http(path, { method: 'POST', headers: type ? { 'Content-Type': type } : {}, body: payload }),
        );
        await expectHarmless(response);
      }),
      { numRuns: 40 },
    );
  });

  it.each([
    ['POST', ''],
    ['POST', '/line-items'],
    ['PATCH', '/line-items/cali_nope'],
    ['POST', '/checkout-session'],
  ])(
    '%s /agent/carts…%s with a cart:write token never answers 5xx and never changes stored data when it fails',
    async (method, suffix) => {
      const guarded = storedDataGuard(api.service.deps.db);
      await fc.assert(
        fc.asyncProperty(body, contentType, async (payload, type) => {
          const path = suffix === '' ? '/agent/carts' : `${cartPath}${suffix}`;
          const response = await guarded(() =>
            api.http(path, {
              method,
              headers: { ...authorization, ...(type ? { 'Content-Type': type } : {}) },
              body: payload,
            }),
          );
          await expectHarmless(response);
        }),
        { numRuns: 40 },
      );
    },
  );

  const readPaths = [
    '/api/store/products',
    '/api/store/products/prod_01tongue2pack',
    '/api/store/reviews',
    '/api/store/regions',
    '/api/store/collections',
    '/changelog',
    '/agent/products',
  ];
  const queryPart = fc.oneof(
    fc.string({ maxLength: 20 }),
    sqlish,
    fc.constantFrom(
      'limit',
      'offset',
      'fields',
      'region_id',
      'handle',
      'product_id',
      '%ZZ',
      '%',
      '+',
      '[]',
      'a[b]',
      '__proto__',
    ),
  );
  const queryString = fc
    .array(fc.tuple(queryPart, queryPart), { maxLength: 5 })
    .map((pairs) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&'));
  const rawQuery = fc.constantFrom(
    'limit=1&limit=2',
    'fields=%ZZ',
    'fields=' + '*variants.'.repeat(200),
    'offset=1e3',
    'limit=0x10',
    'limit=%20',
    'a=%E0%A4%A',
    '&&&==',
    'region_id[]=reg_us',
  );

  it('GET read endpoints never answer 5xx whatever the query', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...readPaths), fc.oneof(queryString, rawQuery), async (path, query) => {
        await expectHarmless(await api.http(`${path}?${query}`));
      }),
      { numRuns: 150 },
    );
  });

  it('odd paths answer JSON 4xx', async () => {
    const oddPaths = [
      '/api/store/products/%00',
      '/api/store/products/%ZZ',
      '/api/store/products/' + 'x'.repeat(5_000),
      '/api/store/products/..%2F..%2Fetc%2Fpasswd',
      '/api//store/products',
      '/checkout_sessions/%E0%A4%A/cancel',
      '/pay/%ZZ',
      '/agent/%ZZ',
      '/%2e%2e/',
      '/api/store/products/prod_01tongue2pack/',
    ];
    for (const path of oddPaths) await expectHarmless(await api.http(path));
    expect((await api.http('/healthz')).status).toBe(200);
  });
});

describe('hostile input on the ACP and UCP bindings', () => {
  // A 4xx given after the idempotency claim is stored under its key by design (D8 of the bindings' design): that
  // table may change on a failure; every other one may not.
  const guardedProtocol = () => storedDataGuard(api.service.deps.db, ['protocol_idempotency']);
  /** One key reused across runs, so conflicts and replays of earlier answers are exercised too. */
  const sharedKey = randomUUID();

  /** The answer is harmless, its body passes the protocol's schema, and an error has the binding's own shape. */
  async function expectProtocolAnswer(path: string, response: Response): Promise<void> {
    await expectHarmless(response);
    const text = await response.text();
    const answer = text ? JSON.parse(text) : undefined;
    const pathname = new URL(path, api.url).pathname;
    expect(protocolBodyProblems(pathname, response.status, answer), text.slice(0, 300)).toEqual([]);
    if (answer === undefined) return;
    // On /ucp/mcp, what the transport refuses before JSON-RPC (a GET) is a UCP protocol error, as on REST.
    if (pathname === '/ucp/mcp' && 'jsonrpc' in answer) {
      expect(answer.jsonrpc).toBe('2.0');
      if (answer.error) {
        expect(answer.error).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
      } else if (answer.result?.structuredContent) {
        expect(protocolBodyProblems('/ucp/checkout-sessions', 200, answer.result.structuredContent)).toEqual([]);
      }
    } else if (pathname.startsWith('/ucp/') && response.status >= 300) {
      // UCP defines its protocol errors in prose only: {code, content, path?, continue_url?}.
      expect(answer).toMatchObject({ code: expect.any(String), content: expect.any(String) });
    }
  }

  const text = fc.oneof(hostileString, unstorableString);
  const uuidOr = (...others: fc.Arbitrary<string | undefined>[]) =>
    fc.oneof(
      fc.constant(undefined).map(() => randomUUID()),
      fc.constant(sharedKey),
      fc.constant(undefined),
      hostileHeaderValue,
      ...others,
    );
  const codes = fc.oneof(
    fc.array(fc.oneof(fc.constantFrom('10OFF', 'NOPE99', 'WELCOME5'), text), { maxLength: 22 }),
    hostileValue,
  );
  const buyer = fc.record(
    { email: fc.oneof(fc.constant('a@example.com'), text), first_name: text, last_name: text, phone_number: text },
    { requiredKeys: [] },
  );
  const quantity = fc.oneof(fc.integer({ min: -2, max: 102 }), fc.double(), hostileValue);
  const itemId = fc.oneof(fc.constant(TWO_PACK), text);

  const ucpShaped = fc.record(
    {
      line_items: fc.oneof(
        fc.array(
          fc.record(
            { id: text, item: fc.oneof(fc.record({ id: itemId }), hostileValue), quantity },
            { requiredKeys: [] },
          ),
          {
            maxLength: 3,
          },
        ),
        hostileValue,
      ),
      buyer: fc.oneof(buyer, hostileValue),
      context: fc.record({ address_country: fc.oneof(fc.constantFrom('DE', 'JP', 'ZZ'), text) }, { requiredKeys: [] }),
      discounts: fc.record({ codes }, { requiredKeys: [] }),
      payment: fc.oneof(fc.constant({ instruments: [] }), hostileValue),
    },
    { requiredKeys: [] },
  );
  /** A valid request but for one hostile string where the store keeps text (buyer, codes). */
  const ucpNearlyValid = fc
    .tuple(text, fc.constantFrom('first_name', 'last_name', 'phone_number', 'code'))
    .map(([value, field]) => ({
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
      ...(field === 'code' ? { discounts: { codes: [value] } } : { buyer: { [field]: value } }),
    }));
  const profileUrl = fc.oneof(
    fc
      .constantFrom(
        '/full.json',
        '/no-discount.json',
        '/no-checkout.json',
        '/old-version.json',
        '/not-json',
        '/invalid.json',
        '/missing.json',
        '/redirect.json',
        '/huge.json',
      )
      .map((name) => profiles.url(name)),
    fc.constantFrom('relative/profile.json', 'http://evil.example/p.json', 'https://', 'javascript:alert(1)'),
  );
  const ucpAgent = fc.oneof(
    profileUrl.map((url) => `profile="${url}"`),
    profileUrl.map((url) => `profile="${url}";version="2099-01-01", other=1`),
    fc.constantFrom('profile=?1', 'profile=', 'garbage;;', 'profile="a" profile="b"', '"profile"'),
    hostileHeaderValue,
    fc.constant(undefined),
  );
  const jsonType = fc.constantFrom('application/json', 'application/json; charset=utf-8');
  /** Mostly near-valid JSON of the request's shape, so that it gets past parsing; the rest any hostile body. */
  const bodyOf = (shaped: fc.Arbitrary<unknown>, nearlyValid: fc.Arbitrary<unknown> = shaped) =>
    fc.oneof(
      { weight: 2, arbitrary: nearlyValid.map((value) => JSON.stringify(value)) },
      { weight: 2, arbitrary: shaped.map((value) => JSON.stringify(value)) },
      hostileBodyWith(shaped),
    );
  const freshUuid = fc.constant(undefined).map(() => randomUUID());
  // Two runs in three send valid headers, so that the body reaches the checks behind them.
  const ucpRequestHeaders = fc.oneof(
    fc.record({
      'UCP-Agent': ucpAgent,
      'Request-Id': uuidOr(),
      'Idempotency-Key': uuidOr(),
      'Content-Type': contentType,
    }),
    {
      weight: 2,
      arbitrary: fc.record({
        'UCP-Agent': fc.constant(undefined).map(() => `profile="${profiles.url('/full.json')}"`),
        'Request-Id': freshUuid,
        'Idempotency-Key': fc.oneof({ weight: 3, arbitrary: freshUuid }, fc.constant(sharedKey)),
        'Content-Type': jsonType,
      }),
    },
  );
  const withoutUndefined = (headers: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined));

  it.each([
    ['POST', '/ucp/checkout-sessions'],
    ['PUT', '/ucp/checkout-sessions/{ucp}'],
    ['POST', '/ucp/checkout-sessions/{ucp}/complete'],
    ['POST', '/ucp/checkout-sessions/{ucpCancel}/cancel'],
  ] as const)('%s %s (UCP) answers in UCP shape, never 5xx, and a failure stores nothing', async (method, template) => {
    const guarded = guardedProtocol();
    await fc.assert(
      fc.asyncProperty(bodyOf(ucpShaped, ucpNearlyValid), ucpRequestHeaders, async (payload, headers) => {
        const path = template.replace(/\{(\w+)\}/, (_, name: keyof typeof sessions) => sessions[name]);
        const response = await guarded(() =>
          api.http(path, { method, headers: withoutUndefined(headers), body: payload }),
        );
        await expectProtocolAnswer(path, response);
      }),
      { numRuns: 40 },
    );
  });

  const acpShaped = fc.record(
    {
      line_items: fc.oneof(
        fc.array(
          fc.oneof(
            fc.record({ id: itemId, quantity }, { requiredKeys: [] }),
            fc.record({ item: fc.oneof(fc.record({ id: itemId }), hostileValue), quantity }, { requiredKeys: [] }),
          ),
          { maxLength: 3 },
        ),
        hostileValue,
      ),
      currency: fc.oneof(fc.constantFrom('usd', 'eur', 'jpy', 'USD', 'chf'), text),
      capabilities: fc.oneof(fc.constant({}), hostileValue),
      discounts: fc.record({ codes }, { requiredKeys: [] }),
      buyer: fc.oneof(buyer, hostileValue),
      fulfillment_details: hostileValueWith(['name', 'address', 'email', 'phone_number']),
      payment_data: fc.oneof(fc.constant({ purchase_order_number: 'PO-1' }), hostileValue),
      items: hostileValue,
    },
    { requiredKeys: [] },
  );
  const acpNearlyValid = fc
    .tuple(text, fc.constantFrom('first_name', 'last_name', 'phone_number', 'code', 'fulfillment'))
    .map(([value, field]) => ({
      line_items: [{ id: TWO_PACK, quantity: 1 }],
      currency: 'usd',
      capabilities: {},
      ...(field === 'code'
        ? { discounts: { codes: [value] } }
        : field === 'fulfillment'
          ? { fulfillment_details: { name: value } }
          : { buyer: { email: 'a@example.com', [field]: value } }),
    }));
  const acpRequestHeaders = fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({
        Authorization: fc.constant(undefined).map(() => acpAuthorization.Authorization),
        'API-Version': fc.constant('2026-04-17'),
        'Idempotency-Key': fc.oneof({ weight: 3, arbitrary: freshUuid }, fc.constant(sharedKey)),
        'Content-Type': jsonType,
      }),
    },
    fc.record({
      Authorization: fc.oneof(
        fc.constant(undefined).map(() => acpAuthorization.Authorization),
        fc.constant(undefined).map(() => readOnlyAuthorization.Authorization),
        fc.constantFrom('Bearer nope', 'Basic eDp5', 'Bearer', ''),
        hostileHeaderValue,
        fc.constant(undefined),
      ),
      'API-Version': fc.oneof(
        fc.constantFrom('2026-04-17', '2026-01-30', '2026-07-16', ''),
        hostileHeaderValue,
        fc.constant(undefined),
      ),
      'Idempotency-Key': uuidOr(fc.constantFrom('', 'x'.repeat(256))),
      'Content-Type': contentType,
    }),
  );

  it.each([
    ['POST', '/acp/checkout_sessions'],
    ['POST', '/acp/checkout_sessions/{acp}'],
    ['POST', '/acp/checkout_sessions/{acp}/complete'],
    ['POST', '/acp/checkout_sessions/{acpCancel}/cancel'],
  ] as const)(
    '%s %s (ACP) answers an ACP Error or session, never 5xx, and a failure stores nothing',
    async (method, template) => {
      const guarded = guardedProtocol();
      await fc.assert(
        fc.asyncProperty(bodyOf(acpShaped, acpNearlyValid), acpRequestHeaders, async (payload, headers) => {
          const path = template.replace(/\{(\w+)\}/, (_, name: keyof typeof sessions) => sessions[name]);
          const response = await guarded(() =>
            api.http(path, { method, headers: withoutUndefined(headers), body: payload }),
          );
          await expectProtocolAnswer(path, response);
        }),
        { numRuns: 40 },
      );
    },
  );

  it('POST /ucp/mcp answers JSON-RPC (checkouts valid UCP), never 5xx, and a failure stores nothing', async () => {
    const guarded = guardedProtocol();
    const meta = fc.record(
      {
        'ucp-agent': fc.oneof(fc.record({ profile: fc.oneof(profileUrl, text) }, { requiredKeys: [] }), hostileValue),
        'idempotency-key': fc.oneof(
          fc.constant(undefined).map(() => randomUUID()),
          fc.constant(sharedKey),
          text,
        ),
      },
      { requiredKeys: [] },
    );
    const call = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), hostileValue),
        id: fc.oneof(fc.integer(), text, fc.constant(null)),
        method: fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping'), text),
        params: fc.oneof(
          fc.record(
            {
              name: fc.oneof(
                fc.constantFrom(
                  'create_checkout',
                  'get_checkout',
                  'update_checkout',
                  'complete_checkout',
                  'cancel_checkout',
                ),
                text,
              ),
              arguments: fc.record(
                {
                  meta: fc.oneof(meta, hostileValue),
                  id: fc.oneof(
                    fc.constant(undefined).map(() => sessions.ucp),
                    text,
                  ),
                  checkout: fc.oneof(ucpNearlyValid, ucpShaped, hostileValue),
                },
                { requiredKeys: [] },
              ),
            },
            { requiredKeys: [] },
          ),
          hostileValue,
        ),
      },
      { requiredKeys: [] },
    );
    /** A valid tool call with a fresh key but for hostile text in the id or the checkout. */
    const nearlyValidCall = fc
      .record({
        id: fc.integer(),
        name: fc.constantFrom(
          'create_checkout',
          'get_checkout',
          'update_checkout',
          'complete_checkout',
          'cancel_checkout',
        ),
        checkout: ucpNearlyValid,
        session: fc.oneof(
          text,
          fc.constant(undefined).map(() => sessions.ucp),
        ),
      })
      .map(({ id, name, checkout, session }) => ({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name,
          arguments: {
            meta: { 'ucp-agent': { profile: profiles.url('/full.json') }, 'idempotency-key': randomUUID() },
            ...(name === 'create_checkout' ? {} : { id: session }),
            ...(name === 'get_checkout' || name === 'cancel_checkout' ? {} : { checkout }),
          },
        },
      }));
    const headers = fc.record({
      'Content-Type': fc.oneof({ weight: 2, arbitrary: jsonType }, contentType),
      Accept: fc.constantFrom('application/json, text/event-stream', 'application/json', 'text/html', undefined),
      'Idempotency-Key': fc.oneof(fc.constant(undefined), hostileHeaderValue),
    });
    await fc.assert(
      fc.asyncProperty(bodyOf(call, nearlyValidCall), headers, async (payload, given) => {
        const response = await guarded(() =>
          api.http('/ucp/mcp', { method: 'POST', headers: withoutUndefined(given), body: payload }),
        );
        await expectProtocolAnswer('/ucp/mcp', response);
      }),
      { numRuns: 80 },
    );
  });

  it('odd paths and methods on the bindings answer in their shape', async () => {
    const odd: Array<[string, string]> = [
      ['GET', '/ucp/checkout-sessions/%00'],
      ['PUT', '/ucp/checkout-sessions/cart_%00'],
      ['GET', '/ucp/checkout-sessions/%ED%A0%80'],
      ['DELETE', '/ucp/checkout-sessions/cart_nope'],
      ['GET', '/ucp/nope'],
      ['GET', '/acp/checkout_sessions/%00'],
      ['POST', '/acp/checkout_sessions/%00/cancel'],
      ['DELETE', '/acp/checkout_sessions/cart_nope'],
      ['GET', '/acp/nope'],
      ['GET', '/ucp/mcp'],
    ];
    const guarded = guardedProtocol();
    for (const [method, path] of odd) {
      const response = await guarded(() =>
        api.http(path, {
          method,
          headers: {
            'UCP-Agent': `profile="${profiles.url('/full.json')}"`,
            'Request-Id': randomUUID(),
            ...acpAuthorization,
          },
        }),
      );
      await expectProtocolAnswer(path, response);
    }
  });
});
