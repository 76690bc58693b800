// MCP 2026-07-28 and 2025-11-25 beside 2025-06-18 on the three MCP servers (/catalog/mcp, /checkout/mcp, /ucp/mcp):
// the official SDK's v1 client and v2 client (pinned to 2026-07-28, on the 2025-11-25 handshake, and negotiating by
// itself), and raw HTTP for what the specification asks of a server: initialize negotiation, the MCP-Protocol-Version
// header for each revision, UnsupportedProtocolVersion, server/discover, the per-request _meta and mirrored headers.
// Every response is validated against the OpenAPI document (contractFetch).
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION as V1_LATEST } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contractFetch } from './support/contract.js';
import { PROTOCOL_ENV, startProfileServer, type ProfileServer } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let profiles: ProfileServer;
beforeAll(async () => {
  profiles = await startProfileServer();
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
  await profiles?.close();
});

const MODERN = '2026-07-28';
const SUPPORTED = ['2026-07-28', '2025-11-25', '2025-06-18'];
const PATHS = ['/catalog/mcp', '/checkout/mcp', '/ucp/mcp'] as const;
type Path = (typeof PATHS)[number];
const TWO_PACK = 'variant_01tongue2pack';

/** A harmless tool call per server: its name, arguments, and what its result shows. */
function sampleCall(path: Path): { name: string; args: Record<string, unknown> } {
  switch (path) {
    case '/catalog/mcp':
      return { name: 'list_regions', args: {} };
    case '/checkout/mcp':
      return { name: 'get_checkout_session', args: { session_id: 'cs_does_not_exist' } };
    case '/ucp/mcp':
      return {
        name: 'create_checkout',
        args: {
          meta: { 'ucp-agent': { profile: profiles.url('/full.json') } },
          checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
        },
      };
  }
}

interface Exchange {
  status: number;
  body: any;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Exchange> {
  const response = await api.http(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const modernMeta = (version = MODERN) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientInfo': { name: 'raw-http', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

/** A 2026-07-28 request as the specification writes it: version and capabilities in _meta, mirrored in headers. */
function modern(
  path: string,
  method: string,
  params: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const mirrored: Record<string, string> = { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': method };
  if (typeof params.name === 'string') mirrored['Mcp-Name'] = params.name;
  return post(
    path,
    { jsonrpc: '2.0', id: 'm1', method, params: { ...params, _meta: modernMeta() } },
    { ...mirrored, ...headers },
  );
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-http', version: '1.0.0' } },
});
const toolsList = { jsonrpc: '2.0', id: 2, method: 'tools/list' };

describe.each(PATHS)('%s over raw HTTP', (path) => {
  it.each([
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    // initialize is the handshake: a client asking for 2026-07-28 (which has none), or for a revision not spoken
    // here, gets the newest handshake revision and decides.
    ['2026-07-28', '2025-11-25'],
    ['2025-03-26', '2025-11-25'],
    ['2099-01-01', '2025-11-25'],
  ])('answers initialize for %s with %s', async (asked, answered) => {
    const { status, body } = await post(path, initialize(asked));
    expect(status).toBe(200);
    expect(body.result.protocolVersion).toBe(answered);
    expect(body.result.capabilities).toEqual({ tools: {} });
  });

  it.each(['2025-11-25', '2025-06-18'])('accepts MCP-Protocol-Version %s on a request after initialize', async (v) => {
    const { status, body } = await post(path, toolsList, { 'MCP-Protocol-Version': v });
    expect(status).toBe(200);
    expect(body.result.tools.length).toBeGreaterThan(0);
    expect(body.result.resultType).toBeUndefined(); // the handshake revisions' result shape
  });

  it('accepts MCP-Protocol-Version 2026-07-28 with the per-request _meta', async () => {
    const { status, body } = await modern(path, 'tools/list');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: 'public' });
    expect(body.result._meta['io.modelcontextprotocol/serverInfo'].name).toMatch(/^storefront-/);
    expect(body.result.tools.length).toBeGreaterThan(0);
  });

  it.each(['2024-11-05', '2099-01-01', 'garbage'])(
    'refuses MCP-Protocol-Version %s: 400 UnsupportedProtocolVersion naming the supported ones',
    async (version) => {
      const { status, body } = await post(path, toolsList, { 'MCP-Protocol-Version': version });
      expect(status).toBe(400);
      expect(body).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32022,
          message: 'Unsupported protocol version',
          data: { supported: SUPPORTED, requested: version },
        },
      });
    },
  );

  it('answers server/discover with its versions, capabilities and identity, cacheable', async () => {
    const { status, body } = await modern(path, 'server/discover');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: SUPPORTED,
      capabilities: { tools: {} },
      ttlMs: expect.any(Number),
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: expect.stringMatching(/^storefront-/) } },
    });
  });

  it('answers a 2026-07-28 tools/call with resultType and serverInfo', async () => {
    const { name, args } = sampleCall(path);
    const { status, body } = await modern(path, 'tools/call', { name, arguments: args });
    expect(status).toBe(200);
    expect(body.result.resultType).toBe('complete');
    expect(body.result._meta['io.modelcontextprotocol/serverInfo']).toBeDefined();
    expect(body.result.content[0].type).toBe('text');
  });

  it('refuses a _meta version it does not speak with -32022 and the request id', async () => {
    const { status, body } = await post(
      path,
      { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: modernMeta('2030-01-01') } },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' },
    );
    expect(status).toBe(400);
    expect(body).toMatchObject({
      id: 5,
      error: { code: -32022, data: { supported: SUPPORTED, requested: '2030-01-01' } },
    });
  });

  it('refuses a 2026-07-28 request whose headers do not mirror its body (-32020)', async () => {
    const mismatched = await modern(path, 'tools/list', {}, { 'Mcp-Method': 'tools/call' });
    expect([mismatched.status, mismatched.body.error.code]).toEqual([400, -32020]);
    const { name, args } = sampleCall(path);
    const wrongName = await modern(path, 'tools/call', { name, arguments: args }, { 'Mcp-Name': 'other_tool' });
    expect([wrongName.status, wrongName.body.error.code]).toEqual([400, -32020]);
    const noMethod = await post(
      path,
      { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: modernMeta() } },
      { 'MCP-Protocol-Version': MODERN },
    );
    expect([noMethod.status, noMethod.body.error.code]).toEqual([400, -32020]);
    const versionDiffers = await post(
      path,
      { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: modernMeta() } },
      { 'MCP-Protocol-Version': '2025-06-18', 'Mcp-Method': 'tools/list' },
    );
    expect([versionDiffers.status, versionDiffers.body.error.code]).toEqual([400, -32020]);
  });

  it('takes a Base64-wrapped Mcp-Name', async () => {
    const { name, args } = sampleCall(path);
    const wrapped = `=?base64?${Buffer.from(name).toString('base64')}?=`;
    const { status, body } = await modern(path, 'tools/call', { name, arguments: args }, { 'Mcp-Name': wrapped });
    expect(status).toBe(200);
    expect(body.result.resultType).toBe('complete');
  });

  it('refuses a 2026-07-28 request without its version or capabilities in _meta (-32602, 400)', async () => {
    const noMeta = await post(path, toolsList, { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' });
    expect([noMeta.status, noMeta.body.error.code]).toEqual([400, -32602]);
    const noCapabilities = await post(
      path,
      {
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      },
      { 'MCP-Protocol-Version': MODERN, 'Mcp-Method': 'tools/list' },
    );
    expect([noCapabilities.status, noCapabilities.body.error.code]).toEqual([400, -32602]);
  });

  it('answers a method 2026-07-28 does not have (ping) with 404 and -32601', async () => {
    const { status, body } = await modern(path, 'ping');
    expect([status, body.error.code]).toEqual([404, -32601]);
  });

  it('gives every tool the four behaviour hints, and single-type schemas (a nullable value as anyOf)', async () => {
    const { body } = await post(path, toolsList);
    for (const tool of body.result.tools) {
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'])
        expect(typeof tool.annotations?.[hint], `${tool.name}.${hint}`).toBe('boolean');
      expect(JSON.stringify([tool.inputSchema, tool.outputSchema]), tool.name).not.toMatch(/"type":\[/);
    }
  });
});

describe.each(PATHS)('%s with the SDK clients', (path) => {
  const url = () => new URL(path, api.url);

  it(`v1 client (initialize ${V1_LATEST}): negotiates its own revision and calls a tool`, async () => {
    const client = new ClientV1({ name: 'sdk-v1', version: '1.0.0' });
    const transport = new TransportV1(url(), { fetch: contractFetch });
    await client.connect(transport);
    expect(transport.protocolVersion).toBe(V1_LATEST);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const { name, args } = sampleCall(path);
    const result = await client.callTool({ name, arguments: args });
    expect((result.content as Array<{ type: string }>)[0]!.type).toBe('text');
    await client.close();
  });

  it.each([
    ['pinned to 2026-07-28', { mode: { pin: MODERN } }, MODERN],
    ['negotiating (auto)', { mode: 'auto' as const }, MODERN],
    ['on the 2025-11-25 handshake (legacy)', { mode: 'legacy' as const }, '2025-11-25'],
  ])('v2 client %s: lists and calls the tools', async (_label, versionNegotiation, negotiated) => {
    const client = new ClientV2({ name: 'sdk-v2', version: '2.0.0' }, { versionNegotiation });
    await client.connect(new TransportV2(url(), { fetch: contractFetch }));
    expect(client.getNegotiatedProtocolVersion()).toBe(negotiated);
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(0);
    const { name, args } = sampleCall(path);
    const result = await client.callTool({ name, arguments: args });
    expect((result.content as Array<{ type: string }>)[0]!.type).toBe('text');
    await client.close();
  });
});
