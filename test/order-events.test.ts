// Orders to the platforms (issue #31 item 4, issue #35 item 3): UCP's order capability (GET /ucp/orders/{id}, order
// events to a platform whose profile subscribes, signed with RFC 9421 under the key the business profile publishes)
// and ACP's order webhooks (`Signature` / `Timestamp`), both through the agents' outbox: each event once, retried
// after a receiver's failure, nothing to a platform that did not subscribe, every body valid against its protocol.
import { createHmac, timingSafeEqual, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCommand } from '../src/admin/commands.js';
import { createLogger } from '../src/log.js';
import { protocolSchemaProblems } from '../src/protocols/schemas.js';
import { bearer, registerClient, requestToken, type RegisteredClient } from './support/agent.js';
import { payUcpCheckout, payWithTestProcessor } from './support/payments.js';
import { PROTOCOL_ENV, protocolBodyProblems, protocolFetch, testValidators, ucpHeaders } from './support/protocols.js';
import { ucpWebhookProblems } from '../src/conformance/order-events.js';
import { capabilityEntry, platformProfile } from '../src/conformance/profile.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver, type ReceivedEvent, type WebhookReceiver } from './support/webhook-receiver.js';

const TWO_PACK = 'variant_01tongue2pack';
const ORDER = 'dev.ucp.shopping.order';

let api: TestService;
let ucpReceiver: WebhookReceiver;
let acpReceiver: WebhookReceiver;
let profiles: { url: (path: string) => string; close(): Promise<void> };
let adminToken: string;

/** Platform profiles served on loopback: one subscribing to order events at the UCP receiver, one not. */
async function startProfiles(webhookUrl: string) {
  const base = platformProfile();
  const subscribed = {
    ucp: {
      ...base.ucp,
      capabilities: {
        ...base.ucp.capabilities,
        [ORDER]: [capabilityEntry(ORDER, '2026-04-08', { config: { webhook_url: webhookUrl } })],
      },
    },
  };
  const latest = platformProfile({
    version: '2026-08-25',
    capabilities: {
      'dev.ucp.shopping.checkout': [capabilityEntry('dev.ucp.shopping.checkout', '2026-08-25')],
      [ORDER]: [capabilityEntry(ORDER, '2026-08-25', { config: { webhook_url: webhookUrl } })],
    },
  });
  const bodies: Record<string, unknown> = {
    '/subscribed.json': subscribed,
    '/unsubscribed.json': base,
    '/subscribed-2026-08-25.json': latest,
  };
  const server: Server = createServer((request, response) => {
    const body = bodies[(request.url ?? '/').split('?')[0]!];
    response.writeHead(body ? 200 : 404, { 'Content-Type': 'application/json' }).end(JSON.stringify(body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  [ucpReceiver, acpReceiver] = await Promise.all([startWebhookReceiver(), startWebhookReceiver()]);
  profiles = await startProfiles(ucpReceiver.url);
  api = await startTestService({ env: PROTOCOL_ENV });
  let out = '';
  const { db } = api.service.deps;
  const code = await runAdminCommand(
    { db, now: Date.now, log: createLogger('silent') },
    ['clients', 'create', '--name', 'Back office', '--scope', 'admin:orders', '--json'],
    { out: (text) => (out += text), err: () => {} },
  );
  expect(code).toBe(0);
  adminToken = await requestToken(api, JSON.parse(out) as RegisteredClient);
});
afterAll(async () => {
  await api?.close();
  await Promise.all([ucpReceiver?.close(), acpReceiver?.close(), profiles?.close()]);
});

let keys = 0;
const newKey = () => `order-events-${Date.now()}-${keys++}`;

async function adminPost(path: string, body?: unknown) {
  const response = await api.http(path, {
    method: 'POST',
    headers: {
      ...bearer(adminToken),
      'Idempotency-Key': newKey(),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** A UCP checkout created by the platform at `profile`, paid in test mode; its order id. */
async function ucpOrder(profile: string): Promise<string> {
  return (await payUcpCheckout(api, profile, [{ item: { id: TWO_PACK }, quantity: 2 }])).orderId;
}

const getOrder = (profile: string, id: string) =>
  protocolFetch(api, `/ucp/orders/${id}`, { headers: ucpHeaders(profile, { 'Idempotency-Key': '' }) });

/** get_order on /ucp/mcp; a result's structuredContent is validated as GET /ucp/orders/{id}'s body. */
async function mcpGetOrder(profile: string, id: string) {
  const response = await api.http('/ucp/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_order', arguments: { meta: { 'ucp-agent': { profile } }, id } },
    }),
  });
  expect(response.status).toBe(200);
  const { result } = (await response.json()) as any;
  expect(protocolBodyProblems(`/ucp/orders/${id}`, 200, result.structuredContent)).toEqual([]);
  expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** Receiver events about `orderId` (UCP: the body is the order; ACP: `data` is), once `count` have arrived. */
async function eventsOf(receiver: WebhookReceiver, orderId: string, count: number): Promise<ReceivedEvent[]> {
  const about = () => receiver.received.filter((event) => (event.body.data?.id ?? event.body.id) === orderId);
  const deadline = Date.now() + 60_000;
  while (about().length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return about();
}

/** The business's published keys, as a platform reads them (2026-08-25 `keys`, 2026-04-08 `signing_keys`). */
async function publishedKeys(): Promise<{ latest: JsonWebKey[]; older: JsonWebKey[] }> {
  const latest = await protocolFetch(api, '/.well-known/ucp');
  const older = await protocolFetch(api, '/ucp/profiles/2026-04-08');
  return { latest: latest.body.keys, older: older.body.signing_keys };
}

/** ACP's webhook signature: base64 HMAC-SHA256 of "<Timestamp>.<raw body>" under the client's webhook secret. */
function verifyAcpWebhook(event: ReceivedEvent, secret: string): boolean {
  const timestamp = String(event.headers['timestamp'] ?? '');
  const given = Buffer.from(String(event.headers['signature'] ?? ''), 'base64');
  const expected = createHmac('sha256', secret).update(`${timestamp}.${event.raw}`).digest();
  return !Number.isNaN(Date.parse(timestamp)) && given.length === expected.length && timingSafeEqual(given, expected);
}

describe('UCP orders', () => {
  it('publishes the order capability and the signing key in both versions of the business profile', async () => {
    const latest = await protocolFetch(api, '/.well-known/ucp');
    const older = await protocolFetch(api, '/ucp/profiles/2026-04-08');
    expect(latest.body.ucp.capabilities[ORDER]).toEqual([expect.objectContaining({ version: '2026-08-25' })]);
    expect(older.body.ucp.capabilities[ORDER]).toEqual([expect.objectContaining({ version: '2026-04-08' })]);
    expect(latest.body.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256' })]);
    expect(older.body.signing_keys).toEqual(latest.body.keys);
    expect(JSON.stringify(latest.body)).not.toMatch(/"d":/);
  });

  it('tells a subscribed platform of created, shipped and delivered once each, signed, retried after a failure', async () => {
    const subscribed = profiles.url('/subscribed.json');
    ucpReceiver.refuseNext = 1; // the first delivery (the order's creation) is refused once, then retried
    const id = await ucpOrder(subscribed);
    const [created] = await eventsOf(ucpReceiver, id, 1);
    expect(created!.body.fulfillment.events).toEqual([]);

    // The platform reads its order.
    const read = await getOrder(subscribed, id);
    expect(read.response.status).toBe(200);
    expect(read.body).toMatchObject({
      ucp: { version: '2026-04-08', status: 'success' },
      id,
      currency: 'USD',
      line_items: [{ quantity: { total: 2, fulfilled: 0 }, status: 'processing' }],
    });

    await adminPost(`/admin/orders/${id}/shipments`, {
      carrier: 'UPS',
      tracking_number: '1Z999AA10123456784',
      tracking_url: 'https://track.example.com/1Z999AA10123456784',
    });
    await adminPost(`/admin/orders/${id}/deliver`);
    // Deliveries are not ordered (two may be in flight at once): each is a snapshot, told apart by what it shows.
    const events = (await eventsOf(ucpReceiver, id, 3))
      .slice()
      .sort((a, b) => a.body.fulfillment.events.length - b.body.fulfillment.events.length);
    // Once each: a late duplicate would show up in the meantime.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await eventsOf(ucpReceiver, id, 3)).toHaveLength(3);
    expect(events.map((event) => event.body.fulfillment.events.map((step: any) => step.type))).toEqual([
      [],
      ['shipped'],
      ['shipped', 'delivered'],
    ]);
    expect(events[1]!.body.fulfillment.events[0]).toMatchObject({
      carrier: 'UPS',
      tracking_number: '1Z999AA10123456784',
      tracking_url: 'https://track.example.com/1Z999AA10123456784',
      line_items: [{ id: read.body.line_items[0].id, quantity: 2 }],
    });
    expect(events[2]!.body.line_items[0]).toMatchObject({ quantity: { total: 2, fulfilled: 2 }, status: 'fulfilled' });

    const { latest, older } = await publishedKeys();
    for (const event of events) {
      expect(protocolSchemaProblems(testValidators, 'ucp.order', event.body)).toEqual([]);
      expect(ucpWebhookProblems(event, ucpReceiver.url, older)).toEqual([]);
      expect(ucpWebhookProblems(event, ucpReceiver.url, latest)).toEqual([]);
      expect(event.headers['ucp-agent']).toBe('profile="https://shop.example.com/.well-known/ucp"');
      expect(String(event.headers['webhook-id'])).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number(event.headers['webhook-timestamp'])).toBeGreaterThan(0);
    }
    // A body changed in transit fails verification.
    const tampered = { ...events[0]!, raw: events[0]!.raw.replace('"USD"', '"EUR"') };
    expect(ucpWebhookProblems(tampered, ucpReceiver.url, latest)).toEqual([
      'Content-Digest sha-256 is not the digest of the body received',
    ]);
    // A covered header the delivery lacks fails (RFC 9421 §2.5), never signed over as an empty value.
    const withoutAgent = { ...events[0]!, headers: { ...events[0]!.headers, 'ucp-agent': undefined } };
    expect(ucpWebhookProblems(withoutAgent, ucpReceiver.url, latest)).toEqual([
      'the signature covers ucp-agent, which the delivery does not carry',
    ]);
    // The key its keyid names must be an ES256 key: another key type under that kid is refused, whatever it verifies.
    const kid = latest[0]!.kid;
    const rsa = { kty: 'RSA', kid, n: 'AQAB', e: 'AQAB' };
    expect(ucpWebhookProblems(events[0]!, ucpReceiver.url, [rsa])).toEqual([
      `key ${kid} is not an ES256 key (EC P-256)`,
    ]);
    // Any label: the same signature under another label verifies.
    const relabel = (value: unknown) => String(value).replace(/^sig1=/, 'ucp=');
    const relabelled = {
      ...events[0]!,
      headers: {
        ...events[0]!.headers,
        'signature-input': relabel(events[0]!.headers['signature-input']),
        signature: relabel(events[0]!.headers.signature),
      },
    };
    expect(ucpWebhookProblems(relabelled, ucpReceiver.url, latest)).toEqual([]);
    expect(new Set(events.map((event) => event.headers['webhook-id'])).size).toBe(3);
    // The refused first delivery was retried: two attempts for the creation, one for each later event.
    const rows = await api.service.deps
      .db('webhook_deliveries')
      .where({ audience: 'ucp' })
      .whereRaw("payload->>'id' = ?", [id])
      .orderBy('created_at');
    expect(rows.map((row) => [row.type, row.attempts, row.delivered_at !== null])).toEqual([
      ['order.created', 2, true],
      ['order.shipped', 1, true],
      ['order.delivered', 1, true],
    ]);
  });

  it('tells a platform that did not subscribe nothing, and shows an order only to the platform that created it', async () => {
    const unsubscribed = profiles.url('/unsubscribed.json');
    const id = await ucpOrder(unsubscribed);
    await adminPost(`/admin/orders/${id}/shipments`, { carrier: 'UPS', tracking_number: 'T-1' });
    const rows = await api.service.deps.db('webhook_deliveries').whereRaw("payload->>'id' = ?", [id]);
    expect(rows).toEqual([]);
    expect(ucpReceiver.received.filter((event) => event.body.id === id)).toEqual([]);

    // Without the order capability, the order cannot be read; another platform's order is not found.
    const refused = await getOrder(unsubscribed, id);
    expect(refused.body.messages[0].code).toBe('capabilities_incompatible');
    const other = await getOrder(profiles.url('/subscribed.json'), id);
    expect(other.body).toMatchObject({ ucp: { status: 'error' }, messages: [{ code: 'not_found' }] });
    const unknown = await getOrder(profiles.url('/subscribed.json'), 'order_unknown');
    expect(unknown.body.messages[0].code).toBe('not_found');
  });

  it('answers and signs a 2026-08-25 platform in its own version', async () => {
    const profile = profiles.url('/subscribed-2026-08-25.json');
    const id = await ucpOrder(profile);
    const read = await getOrder(profile, id);
    expect(read.body).toMatchObject({ ucp: { version: '2026-08-25', status: 'success' }, id });
    const [created] = await eventsOf(ucpReceiver, id, 1);
    expect(created!.body.ucp.version).toBe('2026-08-25');
    expect(protocolSchemaProblems(testValidators, 'ucp@2026-08-25.order', created!.body)).toEqual([]);
    expect(ucpWebhookProblems(created!, ucpReceiver.url, (await publishedKeys()).latest)).toEqual([]);
  });
});

describe('UCP orders over /ucp/mcp', () => {
  it('get_order answers the REST body, and the same refusals', async () => {
    const list = await api.http('/ucp/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const tool = ((await list.json()) as any).result.tools.find((candidate: any) => candidate.name === 'get_order');
    expect(tool.inputSchema.required).toEqual(['meta', 'id']);
    expect(tool.outputSchema.$defs['shopping.order']).toBeDefined();
    expect(tool.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });

    for (const profile of [profiles.url('/subscribed.json'), profiles.url('/subscribed-2026-08-25.json')]) {
      const id = await ucpOrder(profile);
      const rest = await getOrder(profile, id);
      expect(rest.body).toMatchObject({ ucp: { status: 'success' }, id });
      expect(await mcpGetOrder(profile, id)).toEqual(rest.body);
      // Another platform's order and an unknown id: not_found, as on REST.
      const other = await mcpGetOrder(profiles.url('/unsubscribed.json'), id);
      expect(other.messages[0].code).toBe('capabilities_incompatible');
      expect(other).toEqual((await getOrder(profiles.url('/unsubscribed.json'), id)).body);
      const otherPlatform = profile.endsWith('/subscribed.json')
        ? profiles.url('/subscribed-2026-08-25.json')
        : profiles.url('/subscribed.json');
      const notFound = await mcpGetOrder(otherPlatform, id);
      expect(notFound).toMatchObject({ ucp: { status: 'error' }, messages: [{ code: 'not_found' }] });
      expect(notFound).toEqual((await getOrder(otherPlatform, id)).body);
      expect((await mcpGetOrder(profile, 'order_unknown')).messages[0].code).toBe('not_found');
    }
  });
});

describe('ACP order webhooks', () => {
  it('sends order_create and order_update to the client that created the session, signed with its secret', async () => {
    const client = (await registerClient(api, {
      scope: 'cart:write',
      webhook_url: acpReceiver.url,
    })) as RegisteredClient & {
      webhook_secret: string;
    };
    const token = await requestToken(api, client);
    const created = await protocolFetch(api, '/acp/checkout_sessions', {
      method: 'POST',
      headers: {
        ...bearer(token),
        'API-Version': '2026-04-17',
        'Content-Type': 'application/json',
        'Idempotency-Key': newKey(),
      },
      body: JSON.stringify({ line_items: [{ id: TWO_PACK, quantity: 1 }], currency: 'usd', capabilities: {} }),
    });
    expect(created.response.status).toBe(201);
    await payWithTestProcessor(api, created.body.id);
    const [first] = await eventsOf(acpReceiver, await orderIdOf(created.body.id), 1);
    const id = first!.body.data.id as string;
    await adminPost(`/admin/orders/${id}/refunds`, { amount: 100 });
    const events = await eventsOf(acpReceiver, id, 2);
    expect(events.map((event) => event.body.type)).toEqual(['order_create', 'order_update']);
    expect(events[1]!.body.data.adjustments).toEqual([
      expect.objectContaining({ type: 'refund', amount: 100, currency: 'usd', status: 'completed' }),
    ]);
    for (const event of events) {
      expect(protocolSchemaProblems(testValidators, 'acp.Order', event.body.data)).toEqual([]);
      expect(event.body.data).toMatchObject({ type: 'order', checkout_session_id: created.body.id });
      expect(verifyAcpWebhook(event, client.webhook_secret)).toBe(true);
      expect(verifyAcpWebhook(event, `${client.webhook_secret}x`)).toBe(false);
    }
    // The ACP client is not also sent the agent API's `order.created`.
    expect(acpReceiver.received.filter((event) => event.body.type?.startsWith('order.'))).toEqual([]);
  });
});

async function orderIdOf(sessionId: string): Promise<string> {
  const row = await api.service.deps.db('orders').where({ session_id: sessionId }).first('id');
  return row.id as string;
}
