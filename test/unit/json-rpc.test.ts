// The JSON-RPC core's pure parts (src/mcp/rpc.ts): what a message is, how each variant admits it, and how each
// variant answers what goes wrong; the MCP servers and UCP's /ucp/mcp differ only there.
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/http/protocol-io.js';
import {
  admitted,
  classify,
  createRpcServer,
  MCP_VARIANT,
  RpcError,
  type Answer,
  type RpcTool,
  type RpcVariant,
} from '../../src/mcp/rpc.js';
import { rpcErrorOf, UCP_VARIANT, type UcpCaller } from '../../src/mcp/ucp-server.js';

const request = (extra: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', ...extra });

describe('classify', () => {
  it('tells requests, notifications, client responses and anything else apart', () => {
    expect(classify(request({ params: { a: 1 } }))).toEqual({
      kind: 'request',
      id: 1,
      method: 'tools/list',
      params: { a: 1 },
      objectParams: true,
    });
    expect(classify({ jsonrpc: '2.0', method: 'notifications/initialized' })).toEqual({
      kind: 'notification',
      objectParams: true,
    });
    expect(classify({ jsonrpc: '2.0', id: 'a', result: {} })).toEqual({ kind: 'response' });
    expect(classify({ jsonrpc: '2.0', id: 7, error: { code: 1, message: 'no' } })).toEqual({ kind: 'response' });
    for (const invalid of [
      request({ jsonrpc: '1.0' }),
      request({ id: null }),
      request({ id: 1.5 }),
      request({ id: {} }),
      { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'both' } },
      { jsonrpc: '2.0', id: 1, error: 'not an object' },
      { jsonrpc: '2.0', id: 1 },
      [request({})],
      null,
    ])
      expect(classify(invalid), JSON.stringify(invalid)).toEqual({ kind: 'invalid' });
  });

  it('reads params that are not an object as none, and says so', () => {
    expect(classify(request({ params: [1] }))).toMatchObject({ kind: 'request', params: {}, objectParams: false });
    expect(classify({ jsonrpc: '2.0', method: 'x', params: 'y' })).toEqual({
      kind: 'notification',
      objectParams: false,
    });
  });
});

describe('admitted, by variant', () => {
  it('MCP accepts a client response (202) and refuses params that are not an object', () => {
    expect(admitted(classify({ jsonrpc: '2.0', id: 1, result: {} }), MCP_VARIANT)).toBe('accepted');
    expect(admitted(classify(request({ params: [1] })), MCP_VARIANT)).toBe('invalid');
    expect(admitted(classify({ jsonrpc: '2.0', method: 'x', params: 3 }), MCP_VARIANT)).toBe('invalid');
  });

  it('UCP refuses a client response and reads params that are not an object as none', () => {
    expect(admitted(classify({ jsonrpc: '2.0', id: 1, result: {} }), UCP_VARIANT)).toBe('invalid');
    expect(admitted(classify(request({ params: [1] })), UCP_VARIANT)).toMatchObject({ kind: 'request', params: {} });
    expect(admitted(classify({ jsonrpc: '2.0', method: 'x', params: 3 }), UCP_VARIANT)).toBe('accepted');
  });
});

describe("UCP's error mapping (rpcErrorOf)", () => {
  const body = (code: string) => ({ code, content: `${code} happened`, continue_url: 'https://shop.example/' });

  it('maps the REST status and code to the JSON-RPC code, keeping the status and the body as data', () => {
    const cases: Array<[number, string, number]> = [
      [424, 'profile_unreachable', -32001],
      [422, 'version_unsupported', -32001],
      [400, 'invalid_profile_url', -32001],
      [400, 'invalid_request', -32602],
      [409, 'checkout_not_modifiable', -32000],
      [500, 'internal_error', -32603],
    ];
    for (const [status, code, rpcCode] of cases) {
      const error = rpcErrorOf(status, body(code));
      expect([error.status, error.object], code).toEqual([
        status,
        { code: rpcCode, message: `${code} happened`, data: body(code) },
      ]);
      expect(error.options.headers).toBeUndefined();
    }
  });

  it("carries a Retry-After as data.retry_after and as the answer's header; a 503 is a protocol error", () => {
    const error = rpcErrorOf(503, body('idempotency_in_flight'), '1');
    expect([error.status, error.code, error.object.data, error.options.headers]).toEqual([
      503,
      -32000,
      { ...body('idempotency_in_flight'), retry_after: 1 },
      { 'Retry-After': '1' },
    ]);
  });
});

describe('the core, with each variant', () => {
  const caller: UcpCaller = { ip: '127.0.0.1', idempotencyKeyHeader: '', log: () => undefined as never };
  const failing: RpcTool<UcpCaller> = {
    name: 'fail',
    listing: { name: 'fail', inputSchema: { type: 'object' } },
    call: () => Promise.reject(new ProtocolError(409, 'checkout_not_modifiable', 'It is canceled.')),
  };
  const serverOf = (variant: RpcVariant<UcpCaller>) =>
    createRpcServer({ name: 'test', version: '1', tools: [failing] }, variant);
  const answer = async (variant: RpcVariant<UcpCaller>, message: object) => {
    const given: Answer = await serverOf(variant).answer(message, caller);
    return given.kind === 'accepted' ? given : { ...given, json: JSON.parse(given.json) };
  };
  const call = (name: unknown) => request({ method: 'tools/call', params: { name, arguments: {} } });

  it('answers an invalid message, an unknown method and an unknown tool as each variant says', async () => {
    expect(await answer(MCP_VARIANT, { jsonrpc: '2.0' })).toMatchObject({
      kind: 'invalid',
      status: 400,
      json: { id: null, error: { code: -32700 } },
    });
    expect(await answer(UCP_VARIANT, { jsonrpc: '2.0' })).toMatchObject({
      kind: 'invalid',
      status: 400,
      json: { id: null, error: { code: -32600 } },
    });
    for (const variant of [MCP_VARIANT, UCP_VARIANT])
      expect(await answer(variant, request({ method: 'nope' }))).toMatchObject({
        status: 200,
        json: { id: 1, error: { code: -32601 } },
      });
    expect(await answer(MCP_VARIANT, call('nope'))).toMatchObject({
      status: 200,
      json: { id: 1, result: { isError: true, content: [{ text: expect.stringContaining('fail') }] } },
    });
    expect(await answer(UCP_VARIANT, call('nope'))).toMatchObject({
      status: 400,
      json: { id: 1, error: { code: -32602, data: { code: 'invalid_request', path: '$.name' } } },
    });
    // A name the tools do not have, though every object has it, is no tool.
    expect(await answer(UCP_VARIANT, call('toString'))).toMatchObject({
      status: 400,
      json: { error: { code: -32602 } },
    });
  });

  it('answers initialize without protocolVersion only where the variant lets it', async () => {
    const initialize = request({ method: 'initialize', params: {} });
    expect(await answer(MCP_VARIANT, initialize)).toMatchObject({ json: { error: { code: -32602 } } });
    expect(await answer(UCP_VARIANT, initialize)).toMatchObject({
      status: 200,
      json: { result: { protocolVersion: '2025-11-25', serverInfo: { name: 'test', version: '1' } } },
    });
  });

  it("maps a tool's thrown protocol error by UCP's mapping; without a mapping it propagates", async () => {
    expect(await answer(UCP_VARIANT, call('fail'))).toEqual({
      kind: 'response',
      status: 409,
      headers: {},
      json: {
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32000,
          message: 'It is canceled.',
          data: { code: 'checkout_not_modifiable', content: 'It is canceled.' },
        },
      },
    });
    await expect(answer(MCP_VARIANT, call('fail'))).rejects.toBeInstanceOf(ProtocolError);
    expect(new RpcError(-32602, 'x').status).toBe(200);
  });
});

describe('MCP 2026-07-28 in the core', () => {
  const RESULT = { content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 } };
  const cachedTool: RpcTool<() => never> = {
    name: 'kept',
    listing: { name: 'kept', inputSchema: { type: 'object' } },
    call: () => Promise.resolve(JSON.stringify(RESULT)),
    cached: () => Buffer.from(JSON.stringify(RESULT)),
  };
  const server = createRpcServer({ name: 'test', version: '1', tools: [cachedTool] }, MCP_VARIANT);
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const message = request({ method: 'tools/call', params: { name: 'kept', arguments: {}, _meta: meta } });
  const headers = { protocolVersion: '2026-07-28', method: 'tools/call', name: 'kept' };

  it('answers a cached call from its bytes exactly as the call itself, with resultType and serverInfo first', async () => {
    const parts = server.cachedAnswer!(message, headers)!;
    const fromCache = Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
    const called = await server.answer(message, () => undefined as never, headers);
    expect(called.kind === 'response' && called.json).toBe(fromCache.toString());
    expect(JSON.parse(fromCache.toString())).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: {
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'test', version: '1' } },
        ...RESULT,
      },
    });
  });

  it('leaves a call whose headers do not mirror it to answer(), which refuses it', async () => {
    const mismatched = { ...headers, name: 'other' };
    expect(server.cachedAnswer!(message, mismatched)).toBeUndefined();
    const refused = await server.answer(message, () => undefined as never, mismatched);
    expect(refused).toMatchObject({ status: 400 });
    expect(refused.kind === 'response' && JSON.parse(refused.json).error.code).toBe(-32020);
  });

  it('answers a legacy call (no _meta, no modern header) from the cache as before', () => {
    const legacy = request({ method: 'tools/call', params: { name: 'kept', arguments: {} } });
    const parts = server.cachedAnswer!(legacy)!;
    const text = parts.map((part) => part.toString()).join('');
    expect(JSON.parse(text)).toEqual({ jsonrpc: '2.0', id: 1, result: RESULT });
  });
});
