// Traces over real HTTP, received by an OTLP/HTTP receiver as a collector would: each request's server span named by
// its route template and child of the caller's traceparent, its statements as its children, its log lines carrying
// its trace and span ids, and its trace id handed back as the request id.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CART_READS } from '../src/db/repositories/catalog.js';
import { tracingEnabled } from '../src/tracing.js';
import { bearer, registerClient, requestToken } from './support/agent.js';
import { serverUrl } from './support/database.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './support/otlp-receiver.js';
import { holdTable, pause } from './support/statements.js';
import { payWithTestProcessor } from './support/payments.js';
import { startFakeStripe } from './support/stripe.js';
import { recordLogLines } from './support/answers.js';
import { startTestService, type TestService } from './support/service.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

const SERVER = 2;
const CLIENT = 3;

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;

let receiver: OtlpReceiver;
let api: TestService;
const { log, lines: logLines } = recordLogLines();

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  api = await startTestService({
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'storefront-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      // With Redis, the rate limiter's commands are spans of the request too.
      ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    },
    log,
  });
});
afterAll(async () => {
  await api?.close();
  await receiver?.close();
});

/** A traceparent as a caller's tracer would send it: a new trace, its span, sampled. */
function inboundTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function flushed(): Promise<void> {
  await api.service.deps.tracing!.forceFlush();
}

const inTrace = (traceId: string) => (span: ReceivedSpan) => span.traceId === traceId;

describe('tracing', () => {
  it('is off, loading no SDK, unless an OTLP endpoint is named', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'x' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(
      false,
    );
  });

  it('traces a checkout create: the server span under the caller, its statements, its logs, its id returned', async () => {
    const inbound = inboundTrace();
    const response = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', traceparent: inbound.traceparent, tracestate: 'vendor=1' },
      body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
    });
    expect(response.status).toBe(201);
    const session = (await response.json()) as { id: string };
    // The trace id is handed back as the request id.
    expect(response.headers.get('x-request-id')).toBe(inbound.traceId);
    await flushed();

    const server = await receiver.waitForSpan((span) => span.traceId === inbound.traceId && span.kind === SERVER);
    expect(server.name).toBe('POST /checkout_sessions');
    expect(server.parentSpanId).toBe(inbound.spanId);
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/checkout_sessions',
      'http.response.status_code': 201,
      'url.path': '/checkout_sessions',
      'storefront.operation_id': 'createCheckoutSessionAlias',
    });
    expect(server.resource).toMatchObject({
      'service.name': 'storefront-under-test',
      'deployment.environment.name': 'test',
    });
    // No id in any span's name.
    for (const span of receiver.spans.filter(inTrace(inbound.traceId))) expect(span.name).not.toContain(session.id);

    // Its statements: the read (region, variants, promotions) and the insert, each a client span under it, named by
    // the statement's name.
    const statements = receiver.spans.filter(
      (span) => span.traceId === inbound.traceId && span.attributes['db.system.name'] === 'postgresql',
    );
    expect(statements).toHaveLength(2);
    for (const statement of statements) {
      expect(statement.kind).toBe(CLIENT);
      expect(statement.parentSpanId).toBe(server.spanId);
      expect(statement.attributes['db.query.text']).toEqual(expect.any(String));
      expect(statement.name).toBe(
        statement.attributes['db.query.summary'] ?? statement.attributes['db.operation.name'],
      );
    }

    // With Redis, the limiter's count is a command under it.
    if (redisUrl) {
      const commands = receiver.spans.filter(
        (span) => span.parentSpanId === server.spanId && span.attributes['db.system.name'] === 'redis',
      );
      expect(commands.length).toBeGreaterThan(0);
      for (const command of commands) expect(command.kind).toBe(CLIENT);
    }

    // Its log line carries its trace and span, and its request id.
    const line = logLines.find((entry) => entry.msg === 'request' && entry.requestId === inbound.traceId);
    expect(line).toMatchObject({ trace_id: inbound.traceId, span_id: server.spanId, status: 201 });
  });

  it('names a read by its template, never its path, and a path no route serves by its method alone', async () => {
    const inbound = inboundTrace();
    const created = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
    });
    const { id } = (await created.json()) as { id: string };
    const read = await api.http(`/checkout_sessions/${id}`, { headers: { traceparent: inbound.traceparent } });
    expect(read.status).toBe(200);
    const other = inboundTrace();
    const missing = await api.http('/no/such/path', { headers: { traceparent: other.traceparent } });
    expect(missing.status).toBe(404);
    await flushed();

    const server = await receiver.waitForSpan((span) => span.traceId === inbound.traceId && span.kind === SERVER);
    expect(server.name).toBe('GET /checkout_sessions/{id}');
    expect(server.attributes['http.route']).toBe('/checkout_sessions/{id}');
    const unknown = await receiver.waitForSpan((span) => span.traceId === other.traceId && span.kind === SERVER);
    expect(unknown.name).toBe('GET');
    expect(unknown.attributes['http.route']).toBeUndefined();
    expect(unknown.attributes['http.response.status_code']).toBe(404);
  });

  it("joins the caller's trace on the MCP endpoints too, named by the endpoint", async () => {
    const inbound = inboundTrace();
    const response = await api.http('/catalog/mcp', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        traceparent: inbound.traceparent,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(200);
    await response.text();
    await flushed();
    const server = await receiver.waitForSpan((span) => span.traceId === inbound.traceId && span.kind === SERVER);
    expect(server).toMatchObject({ name: 'POST /catalog/mcp', parentSpanId: inbound.spanId });
    expect(server.attributes['http.route']).toBe('/catalog/mcp');
  });

  it('marks a replayed create', async () => {
    const key = `trace-${randomBytes(6).toString('hex')}`;
    const send = async () => {
      const inbound = inboundTrace();
      const response = await api.http('/checkout_sessions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key, traceparent: inbound.traceparent },
        body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
      });
      expect(response.status).toBe(201);
      return inbound.traceId;
    };
    const first = await send();
    const second = await send();
    await flushed();
    const firstSpan = await receiver.waitForSpan((span) => span.traceId === first && span.kind === SERVER);
    const secondSpan = await receiver.waitForSpan((span) => span.traceId === second && span.kind === SERVER);
    expect(firstSpan.attributes['storefront.idempotent_replay']).toBeUndefined();
    expect(secondSpan.attributes['storefront.idempotent_replay']).toBe(true);
  });

  it('starts a trace of its own for a request without traceparent, and keeps a caller-given request id', async () => {
    const response = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Request-Id': 'caller-chosen-id' },
      body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('caller-chosen-id');
    const line = logLines.find((entry) => entry.msg === 'request' && entry.requestId === 'caller-chosen-id');
    expect(line?.trace_id).toMatch(/^[0-9a-f]{32}$/);
    await flushed();
    const server = await receiver.waitForSpan((span) => span.traceId === line!.trace_id && span.kind === SERVER);
    expect(server.parentSpanId).toBe('');
    expect(server.name).toBe('POST /checkout_sessions');
  });

  // Inserts into carts are held behind a table lock (PostgreSQL), so that the creates pile up into one group commit.
  it.skipIf(!serverUrl)('links a group commit to every request it stores', async () => {
    const count = 6;
    let answered = 0;
    const countReads = (_response: unknown, query: { sql?: string; bindings?: unknown[][] }) => {
      if (query.sql === NEW_CART_READS) answered += query.bindings![0]!.length;
    };
    const { db, earlierReads } = api.service.deps;
    // Each create reads (none is priced from an earlier one's read), so that all of them are seen to wait.
    earlierReads.creates.clear();
    db.on('query-response', countReads);
    const held = await holdTable(api.database, 'carts', 'exclusive');
    const traces = Array.from({ length: count }, inboundTrace);
    const pending = Promise.all(
      traces.map(({ traceparent }) =>
        api.http('/checkout_sessions', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', traceparent },
          body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
        }),
      ),
    );
    while (answered < count) await pause(5);
    await held.release();
    const responses = await pending;
    db.off('query-response', countReads);
    expect(responses.map((response) => response.status)).toEqual(traces.map(() => 201));
    await flushed();

    const servers = await Promise.all(
      traces.map(({ traceId }) => receiver.waitForSpan((span) => span.traceId === traceId && span.kind === SERVER)),
    );
    const serverOf = new Map(servers.map((span) => [span.spanId, span]));
    const batches = receiver.spans.filter(
      (span) => span.name === 'batched statement' && span.links.some((link) => serverOf.has(link.spanId)),
    );
    // The first insert may carry one create alone (in its request's trace); those held behind it share one.
    const shared = batches.find((span) => span.links.length > 1);
    expect(shared, 'a statement carrying several creates').toBeDefined();
    expect(shared!.parentSpanId).toBe('');
    expect(shared!.attributes['storefront.batch_size']).toBe(shared!.links.length);
    for (const link of shared!.links) expect(serverOf.get(link.spanId)?.traceId).toBe(link.traceId);
    const insert = receiver.spans.find((span) => span.parentSpanId === shared!.spanId && span.kind === CLIENT);
    expect(insert?.attributes['db.system.name']).toBe('postgresql');
  });

  it('follows an agent checkout to its order webhook, linked to the payment and carrying its traceparent', async () => {
    const webhooks = await startWebhookReceiver();
    try {
      const client = await registerClient(api, { scope: 'cart:write orders:read', webhook_url: webhooks.url });
      webhooks.secret = (client as typeof client & { webhook_secret: string }).webhook_secret;
      const token = await requestToken(api, client);
      const inbound = inboundTrace();
      const agentCall = async (path: string, body?: unknown) => {
        const response = await api.http(path, {
          method: 'POST',
          headers: { ...bearer(token), 'Content-Type': 'application/json', traceparent: inbound.traceparent },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect(response.status).toBe(201);
        return (await response.json()) as { id: string };
      };
      const cart = await agentCall('/agent/carts', { items: [{ id: 'variant_01tongue2pack' }] });
      await agentCall(`/agent/carts/${cart.id}/checkout-session`);
      await payWithTestProcessor(api, cart.id);
      const [delivered] = await webhooks.waitFor(1);
      expect(delivered).toMatchObject({ type: 'order.created', signatureValid: true });
      const traceparent = String(delivered!.headers.traceparent);
      const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(traceparent) ?? [];
      expect(traceId, traceparent).toBeDefined();
      await flushed();

      // The agent's requests, named by their templates, in the agent's trace.
      const agentSpans = receiver.spans.filter((span) => span.traceId === inbound.traceId && span.kind === SERVER);
      expect(agentSpans.map((span) => span.name).sort()).toEqual(
        ['POST /agent/carts', 'POST /agent/carts/{id}/checkout-session'].sort(),
      );
      // The webhook's POST is the client span the traceparent names, under its delivery's span.
      const post = await receiver.waitForSpan((span) => span.spanId === parentId);
      expect(post).toMatchObject({ traceId, kind: CLIENT, name: 'POST' });
      expect(post.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 204 });
      const delivery = await receiver.waitForSpan((span) => span.spanId === post.parentSpanId);
      expect(delivery).toMatchObject({ traceId, name: 'deliver order webhook', parentSpanId: '' });
      // The delivery links to the request that wrote the event: the payment, on the pay page.
      expect(delivery.links).toHaveLength(1);
      const payment = await receiver.waitForSpan((span) => span.spanId === delivery.links[0]!.spanId);
      expect(payment).toMatchObject({ kind: SERVER, name: 'POST /pay/{id}', traceId: delivery.links[0]!.traceId });
    } finally {
      await webhooks.close();
    }
  });

  it("sends the pay page's request's traceparent to Stripe, from a client span under it", async () => {
    const stripe = await startFakeStripe();
    const withStripe = await startTestService({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, BASE_URL: 'https://store.example', ...stripe.env },
    });
    try {
      const created = await withStripe.http('/checkout_sessions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
      });
      const { id } = (await created.json()) as { id: string };
      const inbound = inboundTrace();
      const page = await withStripe.http(`/pay/${id}`, {
        redirect: 'manual',
        headers: { traceparent: inbound.traceparent },
      });
      expect(page.status).toBe(303);
      await withStripe.service.deps.tracing!.forceFlush();

      const call = stripe.calls.find(
        (entry) => entry.method === 'POST' && entry.path.startsWith('/v1/checkout/sessions'),
      );
      const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(call?.traceparent ?? '') ?? [];
      expect(traceId, JSON.stringify(call)).toBe(inbound.traceId);
      const client = await receiver.waitForSpan((span) => span.spanId === parentId);
      expect(client).toMatchObject({ kind: CLIENT, name: 'POST', traceId: inbound.traceId });
      const server = await receiver.waitForSpan((span) => span.spanId === client.parentSpanId);
      expect(server).toMatchObject({ kind: SERVER, name: 'GET /pay/{id}', parentSpanId: inbound.spanId });
    } finally {
      await withStripe.close();
      await stripe.close();
    }
  });
});

describe('tracing over OTLP/HTTP protobuf (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf)', () => {
  it('exports the same spans in the protobuf encoding', async () => {
    const protobufReceiver = await startOtlpReceiver();
    const traced = await startTestService({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: protobufReceiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
    });
    try {
      const inbound = inboundTrace();
      const response = await traced.http('/checkout_sessions', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', traceparent: inbound.traceparent },
        body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
      });
      expect(response.status).toBe(201);
      await traced.service.deps.tracing!.forceFlush();
      const server = await protobufReceiver.waitForSpan(
        (span) => span.traceId === inbound.traceId && span.kind === SERVER,
      );
      expect(protobufReceiver.protobufRequests).toBeGreaterThan(0);
      expect(protobufReceiver.spans.length).toBeGreaterThan(0);
      expect(server).toMatchObject({ name: 'POST /checkout_sessions', parentSpanId: inbound.spanId });
      expect(server.attributes).toMatchObject({ 'http.route': '/checkout_sessions', 'http.response.status_code': 201 });
      expect(server.resource['service.name']).toBe('storefront');
      const statements = protobufReceiver.spans.filter(
        (span) => span.traceId === inbound.traceId && span.parentSpanId === server.spanId && span.kind === CLIENT,
      );
      expect(statements.length).toBeGreaterThan(0);
    } finally {
      await traced.close();
      await protobufReceiver.close();
    }
  });
});
