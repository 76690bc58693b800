// The conformance runner (storefront-conformance, npm run conformance) and the capture script (npm run
// conformance:capture) against the in-process service, on this run's storage (PGlite, or the PostgreSQL of
// DATABASE_URL): every protocol check and every store-specific figure passes, and no body breaks the protocols' schemas.
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { captureSessions } from '../src/conformance/capture.js';
import type { Fixture } from '../src/conformance/fixture.js';
import { runConformance } from '../src/conformance/runner.js';
import { capabilityEntry, platformProfile, serveProfiles, type ProfileServer } from '../src/conformance/profile.js';
import { adminCall, adminToken } from './support/admin.js';
import { payUcpCheckout } from './support/payments.js';
import { PROTOCOL_ENV } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let lenient: TestService;
/** The platform the orders given to the runner are made under (UCP 2026-08-25, checkout and order). */
let platform: ProfileServer;
const ORDER_PROFILE = '/orders.json';
/** A platform at the older version the store supports: its orders are answered in 2026-04-08. */
const OLDER_ORDER_PROFILE = '/orders-2026-04-08.json';
beforeAll(async () => {
  const profile = (version: string) =>
    platformProfile({
      version,
      capabilities: Object.fromEntries(
        ['dev.ucp.shopping.checkout', 'dev.ucp.shopping.order'].map((name) => [name, [capabilityEntry(name, version)]]),
      ),
    });
  platform = await serveProfiles({
    [ORDER_PROFILE]: profile('2026-08-25'),
    [OLDER_ORDER_PROFILE]: profile('2026-04-08'),
  });
  // A limit the store's last check (A-R1) can reach in a few hundred requests once the others have run.
  api = await startTestService({ env: { ...PROTOCOL_ENV, RATE_LIMIT_PER_MINUTE: '1000' } });
  lenient = await startTestService({ env: { ...PROTOCOL_ENV, UCP_PLATFORM_PROFILE_POLICY: 'lenient' } });
});
afterAll(async () => {
  await api?.close();
  await lenient?.close();
  await platform?.close();
});

/** The order shipped, delivered and partly refunded by the back office: its events and adjustments are not empty. */
async function shippedAndRefunded(order: NonNullable<Fixture['ucp']>): Promise<NonNullable<Fixture['ucp']>> {
  const token = await adminToken(api, 'admin:orders');
  const path = `/admin/orders/${order.order_id}`;
  for (const [step, body] of [
    ['shipments', { carrier: 'UPS', tracking_number: '1Z999AA10123456784' }],
    ['deliver', undefined],
    ['refunds', { amount: 100 }],
  ] as const)
    expect((await adminCall(api, 'POST', `${path}/${step}`, { token, body })).status).toBe(200);
  return order;
}

/** An order paid on `service` through its test processor under the platform above, as the fixture names it. */
async function paidOrder(service: TestService, path = ORDER_PROFILE): Promise<NonNullable<Fixture['ucp']>> {
  const profile = `${platform.base}${path}`;
  const { checkoutId, orderId } = await payUcpCheckout(service, profile, [
    { item: { id: 'variant_01tongue2pack' }, quantity: 2 },
  ]);
  return { order_id: orderId, profile, checkout_id: checkoutId };
}

/** This store as a merchant fixture describes it: its item, codes, and an OAuth client of its own for ACP. */
async function storeFixture(service: TestService): Promise<Fixture> {
  const registered = await fetch(`${service.url}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'fixture', grant_types: ['client_credentials'], scope: 'cart:write' }),
  });
  const { client_id, client_secret } = (await registered.json()) as { client_id: string; client_secret: string };
  return {
    items: [{ id: 'variant_01tongue2pack', quantity: 2 }],
    promo_codes: { valid: ['10OFF'], invalid: ['NOPE99'] },
    buyer: { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
    address: {
      first_name: 'Ada',
      last_name: 'Lovelace',
      street_address: '1 Analytical Way',
      address_locality: 'San Francisco',
      address_region: 'CA',
      postal_code: '94103',
      address_country: 'US',
    },
    acp: { client_id, client_secret, token_url: '/oauth/token', scope: 'cart:write' },
  };
}

it('captures the scripted session on UCP REST, UCP MCP and ACP with zero schema errors', async () => {
  const lines: string[] = [];
  const result = await captureSessions({ baseUrl: api.url, log: (line) => lines.push(line) });
  expect(lines.filter((line) => !/ 0 errors$/.test(line)).slice(0, -1)).toEqual([]);
  expect(result).toMatchObject({ responses: 27, errors: 0 });
  expect([...result.scenarios.keys()]).toHaveLength(27);
});

it('passes every protocol check and every store-specific figure with zero schema errors', async () => {
  const lines: string[] = [];
  const report = await runConformance({
    baseUrl: api.url,
    fixture: { ...(await storeFixture(api)), ucp: await shippedAndRefunded(await paidOrder(api)) },
    storeSpecific: true,
    timeoutMs: 60_000,
    log: (line) => lines.push(line),
  });
  expect(report.checks.filter((check) => check.outcome === 'fail')).toEqual([]);
  expect(report.plans.map((plan) => [plan.protocol, plan.tested])).toEqual([
    ['ucp', '2026-08-25'],
    ['acp', '2026-04-17'],
  ]);
  // Every protocol check ran (both UCP transports, ACP, both discount capabilities) but the order events, not asked
  // for here (the next test receives them); the one store skip is U-N5.
  const EVENTS_NOT_ASKED =
    'not asked for: --order-events SECONDS has the runner receive the events of an order made under its profile';
  const protocol = report.checks.filter((check) => check.protocol !== 'store');
  expect(protocol.filter((check) => check.outcome !== 'pass').map((check) => [check.id, check.message])).toEqual(
    ['received', 'signature', 'body'].map((id) => [`ucp.order.event-${id}`, EVENTS_NOT_ASKED]),
  );
  expect(new Set(protocol.map((check) => check.transport))).toEqual(new Set([undefined, 'rest', 'mcp', 'webhook']));
  // The catalog, cart and order checks ran against this store's advertised capabilities, and passed.
  const catalogAndCart = [
    'catalog.search',
    'catalog.lookup',
    'catalog.lookup-filters',
    'catalog.product',
    'cart.lifecycle',
    'cart.cancel',
    'order.unknown',
    'order.read',
    'order.totals',
    'order.events',
    'order.other-platform',
    'order.get-order',
  ];
  expect(catalogAndCart.map((id) => protocol.find((check) => check.id === `ucp.${id}`)?.outcome)).toEqual(
    catalogAndCart.map(() => 'pass'),
  );
  expect(report.checks.filter((check) => check.outcome === 'skip').map((check) => [check.id, check.message])).toEqual([
    ...['received', 'signature', 'body'].map((id) => [`ucp.order.event-${id}`, EVENTS_NOT_ASKED]),
    ['store.U-N5', 'the store is not in the lenient policy'],
  ]);
  // ACP's cart, ACP over MCP and the ACP product feed were checked, and passed.
  const passed = report.checks
    .filter((check) => check.outcome === 'pass')
    .map((check) => `${check.id} ${check.transport ?? ''}`);
  expect(passed).toEqual(
    expect.arrayContaining([
      'acp.cart.create rest',
      'acp.cart.update rest',
      'acp.cart.to-checkout rest',
      'acp.cart.cancel rest',
      'acp.mcp.tools mcp',
      'acp.mcp.same-as-rest mcp',
      'acp.feed.products rest',
      'acp.feed.buyable rest',
    ]),
  );
  expect(report.checks.filter((check) => check.protocol === 'store').length).toBeGreaterThanOrEqual(45);
  expect(report.summary.schemaErrors).toBe(0);
  expect(lines).toContain(
    'NOTE https://shop.example.com is advertised; testing its paths on ' + api.url + ' (the URL given)',
  );
  expect(lines.at(-1)).toMatch(/^\d+ pass \/ 0 fail \/ 4 skip \(of \d+\); \d+ responses, 0 schema errors$/);
}, 300_000);

it('passes the UCP checks against a store in the lenient policy, U-N5 included, the refused-profile checks skipped', async () => {
  const report = await runConformance({
    baseUrl: lenient.url,
    fixture: { items: [{ id: 'variant_01tongue2pack', quantity: 1 }], promo_codes: { valid: ['10OFF'] } },
    protocol: 'ucp',
    lenient: true,
    storeSpecific: true,
    timeoutMs: 60_000,
    log: () => undefined,
  });
  expect(report.checks.filter((check) => check.outcome === 'fail')).toEqual([]);
  expect(report.checks.find((check) => check.id === 'store.U-N5')?.outcome).toBe('pass');
  expect(report.checks.find((check) => check.id === 'ucp.order.read')?.message).toBe(
    'the fixture names no order (ucp.order_id, or --order-id) and no order event told of one: pay a checkout on the merchant and give its order id',
  );
  const skipped = report.checks.filter((check) => check.outcome === 'skip');
  expect(skipped.map((check) => `${check.id} ${check.transport ?? ''}`).sort()).toEqual(
    [
      'store.U-N2 ',
      'store.U-N3 ',
      'store.U-N4 ',
      // No order in the fixture: the checks of a real order say why they did not run.
      ...['read', 'totals', 'events', 'other-platform'].map((id) => `ucp.order.${id} rest`),
      'ucp.order.get-order mcp',
      ...['received', 'signature', 'body'].map((id) => `ucp.order.event-${id} webhook`),
      ...['rest', 'mcp'].flatMap((transport) =>
        ['no-checkout', 'unsupported-version', 'unreachable-profile'].map((id) => `ucp.negotiation.${id} ${transport}`),
      ),
    ].sort(),
  );
  expect(report.summary.schemaErrors).toBe(0);
}, 300_000);

it('judges an order in the version negotiated with the platform that made it (2026-04-08), not the tested one', async () => {
  const report = await runConformance({
    baseUrl: lenient.url,
    fixture: {
      items: [{ id: 'variant_01tongue2pack', quantity: 1 }],
      ucp: await paidOrder(lenient, OLDER_ORDER_PROFILE),
    },
    protocol: 'ucp',
    lenient: true,
    timeoutMs: 60_000,
    log: () => undefined,
  });
  expect(report.plans[0]?.tested).toBe('2026-08-25');
  const order = report.checks.filter((check) => check.capability === 'order' && check.transport !== 'webhook');
  expect(order.map((check) => [check.id, check.outcome, check.message])).toEqual(
    ['unknown', 'read', 'totals', 'events', 'other-platform', 'get-order'].map((id) => [
      `ucp.order.${id}`,
      'pass',
      undefined,
    ]),
  );
}, 300_000);

/**
 * This store behind a proxy that adds 1 to the `total` of every order it answers (a merchant whose order totals do
 * not add up): the base URL of the proxy.
 */
async function wrongOrderTotals(service: TestService): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
      ) as Record<string, string>;
      void fetch(`${service.url}${request.url}`, {
        method: request.method,
        headers,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      }).then(async (answer) => {
        let text = await answer.text();
        if (request.url?.startsWith('/ucp/orders/') && answer.status === 200) {
          const body = JSON.parse(text);
          for (const total of body.totals ?? []) if (total.type === 'total') total.amount += 1;
          text = JSON.stringify(body);
        }
        const kept = [...answer.headers].filter(
          ([name]) => !['content-length', 'content-encoding', 'transfer-encoding', 'connection'].includes(name),
        );
        response.writeHead(answer.status, Object.fromEntries(kept)).end(text);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

it("fails ucp.order.totals, saying what does not add up, when a merchant's order total is wrong", async () => {
  // The lenient store: the first one's rate limit is spent by its last check (A-R1).
  const proxy = await wrongOrderTotals(lenient);
  try {
    const report = await runConformance({
      baseUrl: proxy.url,
      fixture: { items: [{ id: 'variant_01tongue2pack', quantity: 1 }], ucp: await paidOrder(lenient) },
      protocol: 'ucp',
      lenient: true,
      timeoutMs: 60_000,
      log: () => undefined,
    });
    const outcome = (id: string) => report.checks.find((check) => check.id === id);
    expect(outcome('ucp.order.read')?.outcome).toBe('pass');
    expect(outcome('ucp.order.totals')).toMatchObject({
      outcome: 'fail',
      message: expect.stringMatching(
        /^expected totals that add up, got 200 .*\(\$\.totals: the entries add up to (\d+), total is (?!\1)\d+\)$/,
      ),
    });
    // MCP is not behind the rewrite: get_order's body differs from the (rewritten) REST one.
    expect(outcome('ucp.order.get-order')).toMatchObject({
      outcome: 'fail',
      message: expect.stringMatching(/^expected the body GET \/orders\/\{id\} answers, got 200 /),
    });
  } finally {
    await proxy.close();
  }
}, 300_000);

/**
 * The UCP checks on the lenient store with order events asked for: once the runner says under which profile, `act`
 * makes the order (and whatever else) while the runner waits for the events.
 */
async function runWithOrderEvents(act: (profile: string, webhookUrl: string) => Promise<void>) {
  let acting: Promise<void> | undefined;
  const report = await runConformance({
    baseUrl: lenient.url,
    fixture: { items: [{ id: 'variant_01tongue2pack', quantity: 1 }] },
    protocol: 'ucp',
    lenient: true,
    orderEventsSeconds: 60,
    timeoutMs: 60_000,
    log: (line) => {
      const said = /^NOTE order events: .* made under (\S+) \(delivered to (\S+)\)$/.exec(line);
      if (said) {
        acting = act(said[1]!, said[2]!);
        acting.catch(() => undefined); // awaited below
      }
    },
  });
  expect(acting).toBeDefined();
  await acting;
  return report;
}

const buyTwoPacks = (profile: string) =>
  payUcpCheckout(lenient, profile, [{ item: { id: 'variant_01tongue2pack' }, quantity: 2 }]);

it('receives the order events of an order made under its profile: signed with a published key, valid orders', async () => {
  const report = await runWithOrderEvents(async (profile) => void (await buyTwoPacks(profile)));
  const events = report.checks.filter((check) => check.transport === 'webhook');
  expect(events.map((check) => [check.id, check.outcome, check.message])).toEqual(
    ['received', 'signature', 'body'].map((id) => [`ucp.order.event-${id}`, 'pass', undefined]),
  );
  // Without an order in the fixture, the order the events told of is read (it was made under the runner's profile).
  const order = report.checks.filter((check) => check.capability === 'order' && check.transport !== 'webhook');
  expect(order.map((check) => [check.id, check.outcome])).toEqual(
    ['unknown', 'read', 'totals', 'events', 'other-platform', 'get-order'].map((id) => [`ucp.order.${id}`, 'pass']),
  );
  expect(report.checks.filter((check) => check.outcome === 'fail')).toEqual([]);
}, 300_000);

it('fails ucp.order.event-signature naming the event, when an event is not signed by the merchant', async () => {
  const report = await runWithOrderEvents(async (profile, webhookUrl) => {
    await buyTwoPacks(profile);
    // A forged delivery: a digest of another body, a signature that covers too little under a key nobody publishes.
    const forged = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Webhook-Id': 'forged',
        'Content-Digest': `sha-256=:${createHash('sha256').update('{}').digest('base64')}:`,
        'Signature-Input': 'sig1=("@method");keyid="nope";alg="ecdsa-p256-sha256"',
        Signature: `sig1=:${Buffer.alloc(64).toString('base64')}:`,
      },
      body: JSON.stringify({ id: 'forged' }),
    });
    expect(forged.status).toBe(200);
  });
  const outcome = (id: string) => report.checks.find((check) => check.id === id);
  expect(outcome('ucp.order.event-received')?.outcome).toBe('pass');
  // Only the forged event is named: the store's verified.
  expect(outcome('ucp.order.event-signature')).toMatchObject({
    outcome: 'fail',
    message: expect.stringMatching(
      /^expected signed events under one of 1 published keys \(.+\), got event \d \(webhook-id forged\): Content-Digest sha-256 is not the digest of the body received; event \d \(webhook-id forged\): the signature does not cover @authority, @path, ucp-agent, content-digest, content-type; event \d \(webhook-id forged\): keyid nope is none of the keys the business profile publishes$/,
    ),
  });
  expect(outcome('ucp.order.event-body')).toMatchObject({
    outcome: 'fail',
    message: expect.stringMatching(
      /^expected orders valid against UCP 2026-08-25 order, got event \d \(webhook-id forged\): \d+ schema errors/,
    ),
  });
}, 300_000);
