// ACP 2026-04-17 over MCP (/acp/mcp, openrpc.agentic_checkout.json) driven by the official MCP SDK client: the five
// tools on the same sessions as ACP REST, meta's version and key, idempotency shared with REST, errors as ACP's flat
// Error in an isError result's text, and bearer authentication before the message is read. Every HTTP exchange is validated
// against the OpenAPI document (contractFetch), and every checkout session and error against ACP's own schema.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolSchemaProblems } from '../src/protocols/schemas.js';
import { agentToken, bearer } from './support/agent.js';
import { contractFetch } from './support/contract.js';
import { PROTOCOL_ENV, protocolFetch, testValidators } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let token: string;
let client: Client;
let counter = 0;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
  token = await agentToken(api, 'cart:write');
  client = await connect(token);
});
afterAll(async () => {
  await client?.close();
  await api?.close();
});

async function connect(bearerToken: string): Promise<Client> {
  const connected = new Client({ name: 'acp-mcp-tests', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/acp/mcp', api.url), {
    fetch: contractFetch,
    requestInit: { headers: bearer(bearerToken) },
  });
  await connected.connect(transport);
  return connected;
}

const TWO_PACK = 'variant_01tongue2pack';
const BASIC = { line_items: [{ id: TWO_PACK, quantity: 2 }], currency: 'usd', capabilities: {} };
const nextKey = () => `mcp-key-${Date.now()}-${counter++}`;
const meta = (key?: string) => ({ api_version: '2026-04-17', ...(key ? { idempotency_key: key } : {}) });

/** A tool call's result, its structuredContent checked against ACP's schema (a session, or the flat Error). */
async function call(name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as {
    isError?: boolean;
    structuredContent?: any;
    content: Array<{ type: string; text: string }>;
  };
  // A session is the structuredContent and the text; an ACP error only the text (the outputSchema is a session's).
  const body = JSON.parse(result.content[0]!.text);
  if (result.isError) expect(result.structuredContent).toBeUndefined();
  else expect(result.structuredContent).toEqual(body);
  const schema = result.isError ? 'acp.Error' : body?.order ? 'acp.CheckoutSessionWithOrder' : 'acp.CheckoutSession';
  expect(protocolSchemaProblems(testValidators, schema, body), JSON.stringify(body)).toEqual([]);
  return { isError: result.isError === true, body };
}

describe('ACP over MCP: the tools', () => {
  it('lists the five tools of the ACP OpenRPC with annotations and self-contained schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'cancel_checkout_session',
      'complete_checkout_session',
      'create_checkout_session',
      'get_checkout_session',
      'update_checkout_session',
    ]);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.get_checkout_session!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(byName.cancel_checkout_session!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.create_checkout_session!.inputSchema.required).toEqual(['meta', 'payload']);
    expect((byName.update_checkout_session!.inputSchema.properties as any).meta.required).toEqual([
      'api_version',
      'idempotency_key',
    ]);
    expect((byName.get_checkout_session!.inputSchema.properties as any).meta.required).toEqual(['api_version']);

    // A client with nothing but the listing can check a payload and a result: no reference leaves the schema.
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    for (const tool of tools) {
      for (const schema of [tool.inputSchema, tool.outputSchema]) {
        const text = JSON.stringify(schema);
        expect(text.match(/"\$ref":"(?!#)[^"]*"/g) ?? [], tool.name).toEqual([]);
        ajv.compile(schema!);
      }
    }
    const createInput = ajv.compile(byName.create_checkout_session!.inputSchema);
    expect(createInput({ meta: meta('k'), payload: BASIC })).toBe(true);
    expect(createInput({ meta: meta('k'), payload: { ...BASIC, line_items: 'two' } })).toBe(false);
  });

  it('creates, reads, updates and cancels one session, the same session ACP REST serves', async () => {
    const created = await call('create_checkout_session', { meta: meta(nextKey()), payload: BASIC });
    expect(created.isError).toBe(false);
    expect(created.body.line_items[0]).toMatchObject({ quantity: 2 });
    const { id } = created.body;

    const overRest = await protocolFetch(api, `/acp/checkout_sessions/${id}`, {
      headers: { ...bearer(token), 'API-Version': '2026-04-17' },
    });
    expect(overRest.body.totals).toEqual(created.body.totals);

    const read = await call('get_checkout_session', { meta: meta(), id });
    expect(read.body.id).toBe(id);

    const updated = await call('update_checkout_session', {
      meta: meta(nextKey()),
      id,
      payload: { line_items: [{ id: TWO_PACK, quantity: 3 }] },
    });
    expect(updated.body.line_items[0]).toMatchObject({ quantity: 3 });

    const completed = await call('complete_checkout_session', { meta: meta(nextKey()), id, payload: {} });
    expect(completed.isError).toBe(true);
    expect(completed.body).toMatchObject({ type: 'invalid_request' });

    const canceled = await call('cancel_checkout_session', { meta: meta(nextKey()), id });
    expect(canceled.body.status).toBe('canceled');
    const again = await call('cancel_checkout_session', { meta: meta(nextKey()), id });
    expect([again.isError, again.body.code]).toEqual([true, 'session_already_canceled']);
  });

  it('replays a key, refuses its reuse with another payload, and shares keys with ACP REST', async () => {
    const key = nextKey();
    const first = await call('create_checkout_session', { meta: meta(key), payload: BASIC });
    const replay = await call('create_checkout_session', { meta: meta(key), payload: BASIC });
    expect(replay.body.id).toBe(first.body.id);
    const reused = await call('create_checkout_session', {
      meta: meta(key),
      payload: { ...BASIC, line_items: [{ id: TWO_PACK, quantity: 1 }] },
    });
    expect([reused.isError, reused.body.code]).toEqual([true, 'idempotency_conflict']);

    const restKey = nextKey();
    const overRest = await protocolFetch(api, '/acp/checkout_sessions', {
      method: 'POST',
      headers: {
        ...bearer(token),
        'API-Version': '2026-04-17',
        'Idempotency-Key': restKey,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify(BASIC),
    });
    const overMcp = await call('create_checkout_session', { meta: meta(restKey), payload: BASIC });
    expect(overMcp.body.id).toBe(overRest.body.id);
  });

  it('checks meta as ACP REST checks its headers', async () => {
    const unsupported = await call('get_checkout_session', {
      meta: { api_version: '2025-09-29' },
      id: 'cs_missing',
    });
    expect(unsupported.body).toMatchObject({ code: 'unsupported_api_version', param: '$.meta.api_version' });

    await expect(
      client.callTool({ name: 'create_checkout_session', arguments: { meta: meta(), payload: BASIC } }),
    ).rejects.toThrow(/idempotency_key/);
    await expect(client.callTool({ name: 'get_checkout_session', arguments: { id: 'x' } })).rejects.toThrow(/meta/);

    const invalidPayload = await call('create_checkout_session', {
      meta: meta(nextKey()),
      payload: { ...BASIC, surprise: true },
    });
    expect([invalidPayload.isError, invalidPayload.body.code]).toEqual([true, 'unknown_field']);

    const missing = await call('get_checkout_session', { meta: meta(), id: 'cs_missing' });
    expect([missing.isError, missing.body.code]).toEqual([true, 'session_not_found']);
  });
});

describe('ACP over MCP: authentication and discovery', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>) =>
    api.http('/acp/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(initialize),
    });

  it('refuses a request without a token (401) or without cart:write (403) before reading it', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);
    const noneBody = await none.json();
    expect(noneBody).toMatchObject({ id: null, error: { code: -32000, data: { code: 'unauthorized' } } });

    const readOnly = await post(bearer(await agentToken(api, 'catalog:read')));
    expect(readOnly.status).toBe(403);
    expect(readOnly.headers.get('www-authenticate')).toContain('insufficient_scope');

    const invalid = await post(bearer('not-a-token'));
    expect([invalid.status, ((await invalid.json()) as any).error.data.code]).toEqual([401, 'invalid_token']);
  });

  it("answers over the rate limit with a JSON-RPC error carrying ACP's Error and the wait, before reading anything", async () => {
    const limited = await startTestService({ env: { ...PROTOCOL_ENV, RATE_LIMIT_PER_MINUTE: '1' } });
    try {
      const send = () =>
        limited.http('/acp/mcp', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...bearer('not-a-token') },
          body: JSON.stringify(initialize),
        });
      expect((await send()).status).toBe(401);
      const refused = await send();
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(await refused.json()).toMatchObject({
        id: null,
        error: {
          code: -32000,
          data: { type: 'service_unavailable', code: 'rate_limit_exceeded', retry_after: retryAfter },
        },
      });
    } finally {
      await limited.close();
    }
  });

  it('advertises the mcp transport in /.well-known/acp.json', async () => {
    const { body } = await protocolFetch(api, '/.well-known/acp.json');
    expect(body.transports).toEqual(['rest', 'mcp']);
  });
});
