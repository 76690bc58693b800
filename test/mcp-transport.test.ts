// The Streamable HTTP rules of both MCP endpoints (the handshake revisions; 2026-07-28 in mcp-revisions.test.ts), checked with raw HTTP: POST only, Origin,
// MCP-Protocol-Version, version negotiation, no batches, body size, media types, Accept, statelessness, rate limits.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpPath } from './support/mcp.js';
import { PROTOCOL_ENV } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api?.close();
});

const PATHS: McpPath[] = ['/catalog/mcp', '/checkout/mcp'];
const SDK_ACCEPT = 'application/json, text/event-stream';

interface Exchange {
  status: number;
  body: any;
  headers: Headers;
}

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  service: TestService = api,
): Promise<Exchange> {
  const response = await service.http(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: SDK_ACCEPT, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

const toolsList = (id: number | string = 1) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-http', version: '1.0.0' } },
});

describe.each(PATHS)('%s', (path) => {
  it('answers a JSON-RPC request with JSON, statelessly: no initialize needed, no session issued', async () => {
    const { status, body, headers } = await post(path, toolsList(7));
    expect(status).toBe(200);
    expect(headers.get('content-type')).toMatch(/^application\/json/);
    expect(headers.get('mcp-session-id')).toBeNull();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 7 });
    expect(body.result.tools.length).toBeGreaterThanOrEqual(3);
  });

  it('carries the rate-limit, request-id and no-store headers on responses the SDK writes', async () => {
    const { headers } = await post(path, toolsList(), { 'X-Request-Id': 'mcp-trace-1' });
    expect(headers.get('x-request-id')).toBe('mcp-trace-1');
    expect(headers.get('ratelimit-limit')).toBe('100000');
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it.each(['GET', 'DELETE', 'PUT'])(
    'answers %s with 405, Allow: POST, OPTIONS and a JSON-RPC error',
    async (method) => {
      const response = await api.http(path, { method, headers: { Accept: 'text/event-stream' } });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST, OPTIONS');
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, message: expect.stringContaining(method) },
      });
    },
  );

  describe('protocol version', () => {
    it.each([
      ['2025-11-25', '2025-11-25'],
      ['2099-01-01', '2025-11-25'], // not spoken here: the newest handshake revision
      ['not-a-version', '2025-11-25'],
      ['2025-06-18', '2025-06-18'],
      ['2025-03-26', '2025-11-25'], // older: it requires batches, which these servers do not accept
    ])('answers initialize for %s with %s', async (asked, answered) => {
      const { status, body } = await post(path, initialize(asked));
      expect(status).toBe(200);
      expect(body.result.protocolVersion).toBe(answered);
      expect(body.result.serverInfo.name).toMatch(/^storefront-/);
    });

    it('advertises only what it does: tools, without listChanged (the tool set never changes)', async () => {
      const { body } = await post(path, initialize('2025-06-18'));
      expect(body.result.capabilities).toEqual({ tools: {} });
    });

    it.each(['2025-03-26', '1999-01-01', 'garbage'])('rejects MCP-Protocol-Version %s with 400', async (version) => {
      const { status, body } = await post(path, toolsList(), { 'MCP-Protocol-Version': version });
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: -32022, data: { requested: version } });
      expect(body.id).toBeNull();
    });

    it.each(['2025-11-25', '2025-06-18'])('accepts MCP-Protocol-Version %s', async (version) => {
      expect((await post(path, toolsList(), { 'MCP-Protocol-Version': version })).status).toBe(200);
    });
  });

  describe('Origin', () => {
    it('rejects a foreign origin with 403 before reading the message', async () => {
      const { status, body } = await post(path, toolsList(), { Origin: 'https://evil.example' });
      expect(status).toBe(403);
      expect(body.error).toMatchObject({ code: -32000, message: expect.stringContaining('https://evil.example') });
    });

    it.each(['null', 'not a url'])('rejects the origin %j', async (origin) => {
      expect((await post(path, toolsList(), { Origin: origin })).status).toBe(403);
    });

    it("accepts the service's own origin and no origin at all", async () => {
      const [own] = api.service.deps.config.mcpAllowedOrigins;
      expect((await post(path, toolsList(), { Origin: own! })).status).toBe(200);
      expect((await post(path, toolsList())).status).toBe(200);
    });
  });

  describe('the message', () => {
    it('answers malformed JSON with a JSON-RPC parse error', async () => {
      for (const text of ['{"jsonrpc": "2.0", "id": 1, "method": ', '']) {
        const { status, body } = await post(path, text);
        expect(status).toBe(400);
        expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } });
      }
    });

    it('rejects a JSON-RPC batch with 400', async () => {
      const { status, body } = await post(path, [toolsList(1), toolsList(2)]);
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: -32600, message: expect.stringMatching(/batch/i) });
    });

    it.each([
      ['a JSON string', '"tools/list"'],
      [
        'nesting deeper than 32 levels',
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'ping',
          params: JSON.parse('{"a":'.repeat(40) + '1' + '}'.repeat(40)),
        }),
      ],
    ])('rejects %s with 400 invalid request', async (_what, text) => {
      const { status, body } = await post(path, text);
      expect(status).toBe(400);
      expect(body.error.code).toBe(-32600);
    });

    it('rejects an object that is not a JSON-RPC message with 400', async () => {
      const { status, body } = await post(path, { hello: 'world' });
      expect(status).toBe(400);
      expect(body.error.code).toBe(-32700);
    });

    it('answers a notification with 202 and no body', async () => {
      const { status, body } = await post(path, { jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(status).toBe(202);
      expect(body).toBeUndefined();
    });

    it('answers an unknown method with a JSON-RPC error', async () => {
      const { status, body } = await post(path, { jsonrpc: '2.0', id: 3, method: 'resources/subscribe', params: {} });
      expect(status).toBe(200);
      expect(body).toMatchObject({ id: 3, error: { code: -32601 } });
    });
  });

  describe('body size', () => {
    const padded = (bytes: number) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { padding: 'x'.repeat(bytes) } } });

    it('serves a body just under 100 kB', async () => {
      expect((await post(path, padded(100 * 1024 - 200))).status).toBe(200);
    });

    it('rejects a body over 100 kB with 413, by Content-Length', async () => {
      const { status, body } = await post(path, padded(150 * 1024));
      expect(status).toBe(413);
      expect(body.error.message).toContain('100 kB');
    });

    it('rejects a streamed body over 100 kB with 413, while reading it', async () => {
      const chunk = new TextEncoder().encode(padded(60 * 1024));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(chunk);
          controller.enqueue(chunk);
          controller.close();
        },
      });
      const response = await api.http(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: SDK_ACCEPT },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(response.status).toBe(413);
    });
  });

  describe('a body in parts', () => {
    /** POSTs `body` with its Content-Length in two writes, split after byte `split`, the second a moment later. */
    function postInParts(body: Buffer, split: number): Promise<{ status: number; text: string }> {
      return new Promise((resolve, reject) => {
        const outgoing = request(
          new URL(path, api.url),
          {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Accept: SDK_ACCEPT, 'Content-Length': body.length },
          },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () => resolve({ status: response.statusCode!, text }));
          },
        );
        outgoing.on('error', reject);
        outgoing.write(body.subarray(0, split));
        setTimeout(() => outgoing.end(body.subarray(split)), 50);
      });
    }

    it('reads it whole, a character split between the parts decoded as one', async () => {
      const message = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'outil_é', arguments: {} } };
      const body = Buffer.from(JSON.stringify(message));
      // After the first of the two bytes of é.
      const { status, text } = await postInParts(body, body.indexOf(Buffer.from('é')) + 1);
      expect(status).toBe(200);
      expect(JSON.parse(text).result.content[0].text).toContain('Unknown tool outil_é;');
    });
  });

  describe('media types', () => {
    it.each([
      [undefined],
      ['*/*'],
      ['application/json'],
      ['application/*;q=0.9'],
      ['APPLICATION/JSON'],
      ['text/html, application/json;q=0.5'],
      ['text/html,\tapplication/* ;q=0.1'],
    ])('serves Accept %j', async (accept) => {
      const response = await api.http(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(accept === undefined ? {} : { Accept: accept }) },
        body: JSON.stringify(toolsList()),
      });
      expect(response.status).toBe(200);
    });

    it.each(['text/html', 'text/event-stream', 'application/jsonx', 'text/html;application/json', 'application/ json'])(
      'answers Accept %s with 406',
      async (accept) => {
        const { status, body } = await post(path, toolsList(), { Accept: accept });
        expect(status).toBe(406);
        expect(body.error.code).toBe(-32000);
      },
    );

    it.each(['text/plain', 'application/x-www-form-urlencoded'])(
      'answers Content-Type %s with 415',
      async (contentType) => {
        expect((await post(path, toolsList(), { 'Content-Type': contentType })).status).toBe(415);
      },
    );
  });
});

describe('statelessness', () => {
  it('answers concurrent requests with the same JSON-RPC id each with its own result', async () => {
    const call = (product: string) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'get_product', arguments: { product } },
    });
    const handles = ['tongue-scraper-2-pack', 'tongue-scraper-2-pack-travel-cases'];
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) => post('/catalog/mcp', call(handles[index % 2]!))),
    );
    answers.forEach(({ body }, index) => {
      expect(body.id).toBe(1);
      expect(body.result.structuredContent.product.handle).toBe(handles[index % 2]);
    });
  });
});

describe('configuration and limits', () => {
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({
      database: api.database,
      env: {
        ...PROTOCOL_ENV,
        RATE_LIMIT_PER_MINUTE: '2',
        MCP_ALLOWED_ORIGINS: 'https://agents.example, http://localhost:5173',
      },
    });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('allows exactly the origins of MCP_ALLOWED_ORIGINS, and answers over the rate limit with a JSON-RPC 429', async () => {
    expect((await post('/catalog/mcp', toolsList(), { Origin: 'http://localhost:5173' }, limited)).status).toBe(200);
    expect(
      (await post('/catalog/mcp', toolsList(), { Origin: api.service.deps.config.mcpAllowedOrigins[0]! }, limited))
        .status,
    ).toBe(403);
    for (const path of [...PATHS, '/ucp/mcp']) {
      const { status, headers, body } = await post(path, toolsList(), { Origin: 'https://agents.example' }, limited);
      expect(status).toBe(429);
      const retryAfter = Number(headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(body).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { retry_after: retryAfter } },
      });
      expect(body.error.message).toMatch(/rate limit/i);
      // The browser client can read the refusal and how long to wait.
      expect(headers.get('access-control-allow-origin')).toBe('https://agents.example');
      expect(headers.get('access-control-expose-headers')).toContain('Retry-After');
    }
  });
});

describe('browsers (CORS)', () => {
  let browsers: TestService;
  const ALLOWED = 'https://agents.example';
  beforeAll(async () => {
    browsers = await startTestService({
      database: api.database,
      env: { ...PROTOCOL_ENV, MCP_ALLOWED_ORIGINS: ALLOWED },
    });
  });
  afterAll(async () => {
    await browsers?.close();
  });

  const preflight = (path: string, origin: string) =>
    browsers.http(path, {
      method: 'OPTIONS',
      headers: {
        Origin: origin,
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,mcp-protocol-version',
      },
    });

  describe.each([...PATHS, '/ucp/mcp'])('%s', (path) => {
    it('grants the preflight of an allowed origin, uncounted, with the headers an MCP client sends', async () => {
      const response = await preflight(path, ALLOWED);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED);
      expect(response.headers.get('access-control-allow-methods')).toBe('POST');
      expect(response.headers.get('access-control-allow-headers')?.split(',')).toEqual(
        expect.arrayContaining(['Content-Type', 'MCP-Protocol-Version', 'Mcp-Method', 'Mcp-Name']),
      );
      expect(response.headers.get('ratelimit-limit')).toBeNull();
    });

    it("answers an allowed origin's message with Access-Control-Allow-Origin and the exposed headers", async () => {
      const { status, headers } = await post(
        path,
        toolsList(),
        { Origin: ALLOWED, 'MCP-Protocol-Version': '2025-06-18' },
        browsers,
      );
      expect(status).toBe(200);
      expect(headers.get('access-control-allow-origin')).toBe(ALLOWED);
      expect(headers.get('vary')).toContain('Origin');
      expect(headers.get('access-control-expose-headers')?.split(',')).toEqual(
        expect.arrayContaining(['Retry-After', 'RateLimit-Remaining', 'X-Request-Id']),
      );
    });

    it('refuses the preflight and the message of any other origin with 403 and no grant', async () => {
      const refused = await preflight(path, 'https://evil.example');
      expect(refused.status).toBe(403);
      expect(refused.headers.get('access-control-allow-origin')).toBeNull();
      expect(((await refused.json()) as any).error.code).toBe(-32000);
      const { status, headers } = await post(path, toolsList(), { Origin: 'https://evil.example' }, browsers);
      expect(status).toBe(403);
      expect(headers.get('access-control-allow-origin')).toBeNull();
    });

    it('an initialize for 2025-03-26 gets 2025-11-25, and a batch is refused', async () => {
      const { body } = await post(path, initialize('2025-03-26'), {}, browsers);
      expect(body.result.protocolVersion).toBe('2025-11-25');
      const batch = await post(path, [toolsList(1), toolsList(2)], {}, browsers);
      expect([batch.status, batch.body.error.code]).toEqual([400, -32600]);
    });

    it('answers a plain OPTIONS with what the endpoint allows', async () => {
      const response = await browsers.http(path, { method: 'OPTIONS' });
      expect(response.status).toBe(204);
      expect(response.headers.get('allow')).toBe('POST, OPTIONS');
    });
  });
});
