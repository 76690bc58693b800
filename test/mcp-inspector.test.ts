// MCP Inspector 2.12's CLI (@modelcontextprotocol/inspector, npm) against every MCP server of the service
// (/catalog/mcp, /checkout/mcp, /ucp/mcp, /acp/mcp) in each of its three protocol eras: `legacy` (the initialize
// handshake), `auto` (server/discover, falling back to initialize) and `modern` (2026-07-28 pinned: server/discover or
// nothing). For each: `tools/list --strict` (no portability warning; the tools the server defines) and one
// `tools/call` whose JSON result is asserted. The CLI talks to the service through a recording proxy that validates
// every response against the OpenAPI document (test/support/contract-proxy.ts), so the test also reads the revision
// each request was made and answered in.
//
// The CLI needs Node >= 22.19 (its `engines`, and undici 8's): as a devDependency it would break `npm ci
// --engine-strict` on Node 20, so the test installs the pinned version into a temporary prefix with npm (or uses
// INSPECTOR_CLI_BIN, a path to an installed `clients/cli/build/index.js`; test/support/node22-cli.ts). It runs where
// the test process's own Node is new enough (the PostgreSQL suite on Node 24 in .ci/run); on an older Node it is
// skipped, unless REQUIRE_NODE22_CLIS=true (.ci/run sets it for the Node 24 suite), when it fails instead.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { startContractProxy, type ContractProxy, type ProxiedExchange } from './support/contract-proxy.js';
import { installCli, nodeServesCli, requireNodeForCli } from './support/node22-cli.js';
import { PROTOCOL_ENV, startProfileServer, type ProfileServer } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

const CLI = {
  spec: '@modelcontextprotocol/inspector@2.12.0',
  entry: 'clients/cli/build/index.js',
  binEnv: 'INSPECTOR_CLI_BIN',
};
const MODERN = '2026-07-28';
const HANDSHAKE = '2025-11-25';
const TWO_PACK = 'variant_01tongue2pack';
const run = promisify(execFile);

requireNodeForCli(CLI.spec);

let cli: string;
let home: string;
let api: TestService;
let proxy: ContractProxy;
let profiles: ProfileServer;
let token: string;

beforeAll(async () => {
  if (!nodeServesCli) return;
  home = await mkdtemp(join(tmpdir(), 'mcp-inspector-'));
  cli = await installCli(CLI, join(home, 'prefix'));
  profiles = await startProfileServer();
  api = await startTestService({ env: PROTOCOL_ENV });
  proxy = await startContractProxy(api.url);
  token = await agentToken(api, 'cart:write');
}, 240_000);

afterAll(async () => {
  await proxy?.close();
  await api?.close();
  await profiles?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

interface Outcome {
  /** The CLI's JSON output (`--format json`): `{result}`, or `{error}` on stderr when it failed. */
  output: any;
  stderr: string;
  code: number;
  /** What the CLI sent and was answered during the run, through the validating proxy. */
  exchanges: ProxiedExchange[];
}

/** Runs the CLI against `path` in `era`, with the test's home (its catalog and state) and nothing else inherited. */
async function inspector(path: string, era: string, headers: string[], ...args: string[]): Promise<Outcome> {
  const from = proxy.exchanges.length;
  const argv = [cli, `${proxy.url}${path}`, '--transport', 'http', '--protocol-era', era, '--format', 'json', ...args];
  for (const header of headers) argv.push('--header', header);
  const { stdout, stderr, code } = await run(process.execPath, argv, {
    env: { PATH: process.env.PATH, HOME: home },
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60_000,
  }).then(
    ({ stdout, stderr }) => ({ stdout, stderr, code: 0 }),
    (error: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
      code: error.code ?? -1,
    }),
  );
  const text = stdout.trim() || stderr.trim();
  let output: unknown;
  try {
    output = JSON.parse(text);
  } catch {
    output = text;
  }
  return { output, stderr, code, exchanges: proxy.exchanges.slice(from) };
}

/** The JSON-RPC method of each request of a run, with the revision it declared (header) and the answer's status. */
function trace(exchanges: ProxiedExchange[]) {
  return exchanges
    .filter((exchange) => exchange.method === 'POST')
    .map((exchange) => [exchange.request?.method, exchange.requestHeaders['mcp-protocol-version'], exchange.status]);
}

/** The revision a run was carried out in, as the server answered it: initialize's protocolVersion, or 2026-07-28. */
function negotiated(exchanges: ProxiedExchange[]): string | undefined {
  for (const exchange of exchanges) {
    if (exchange.request?.method === 'initialize') return JSON.parse(exchange.response).result?.protocolVersion;
    if (exchange.request?.method === 'server/discover' && exchange.status === 200) {
      const { result } = JSON.parse(exchange.response);
      expect(result.supportedVersions).toContain(MODERN);
      return MODERN;
    }
  }
  return undefined;
}

/** A run's requests as each era makes them: the handshake then the method, or server/discover then 2026-07-28. */
function expectEra(era: string, exchanges: ProxiedExchange[], method: string) {
  const methods = trace(exchanges);
  if (era === 'legacy') {
    expect(negotiated(exchanges)).toBe(HANDSHAKE);
    expect(methods).toContainEqual(['initialize', undefined, 200]);
    expect(methods).toContainEqual([method, HANDSHAKE, 200]);
    expect(methods.map(([name]) => name)).not.toContain('server/discover');
  } else {
    expect(negotiated(exchanges)).toBe(MODERN);
    expect(methods[0]).toEqual(['server/discover', MODERN, 200]);
    expect(methods.map(([name]) => name)).not.toContain('initialize');
    // Every 2026-07-28 request carries its revision in _meta and the header, and is answered 200.
    for (const exchange of exchanges.filter((one) => one.method === 'POST')) {
      expect(exchange.request.params._meta['io.modelcontextprotocol/protocolVersion']).toBe(MODERN);
      expect(exchange.requestHeaders['mcp-protocol-version']).toBe(MODERN);
    }
    expect(methods).toContainEqual([method, MODERN, 200]);
  }
}

interface Server {
  path: string;
  headers: () => string[];
  tools: string[];
  call: () => { name: string; args: Record<string, unknown> };
  result: (outcome: any) => void;
}

let key = 0;
const SERVERS: Server[] = [
  {
    path: '/catalog/mcp',
    headers: () => [],
    tools: ['search_products', 'get_product', 'list_reviews', 'list_regions', 'list_collections', 'get_store_policies'],
    call: () => ({ name: 'list_regions', args: {} }),
    result: (result) => {
      expect(result.isError).not.toBe(true);
      expect(result.structuredContent.regions.map((region: { id: string }) => region.id)).toEqual(
        expect.arrayContaining(['reg_us', 'reg_eu']),
      );
    },
  },
  {
    path: '/checkout/mcp',
    headers: () => [],
    tools: ['create_checkout_session', 'get_checkout_session', 'update_checkout_session', 'cancel_checkout_session'],
    call: () => ({
      name: 'create_checkout_session',
      args: { region_id: 'reg_us', items: [{ variant_id: TWO_PACK, quantity: 1 }] },
    }),
    result: (result) => {
      expect(result.isError, JSON.stringify(result).slice(0, 600)).not.toBe(true);
      const session = result.structuredContent;
      expect([session.status, session.line_items[0].item.id, session.line_items[0].item.quantity]).toEqual([
        'ready_for_payment',
        TWO_PACK,
        1,
      ]);
    },
  },
  {
    path: '/ucp/mcp',
    headers: () => [],
    tools: [
      'create_checkout',
      'get_checkout',
      'update_checkout',
      'complete_checkout',
      'cancel_checkout',
      'get_order',
      'search_catalog',
      'lookup_catalog',
      'get_product',
      'create_cart',
      'get_cart',
      'update_cart',
      'cancel_cart',
    ],
    call: () => ({
      name: 'create_checkout',
      args: {
        meta: { 'ucp-agent': { profile: profiles.url('/full.json') } },
        checkout: { line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] },
      },
    }),
    result: (result) => {
      expect(result.isError, JSON.stringify(result).slice(0, 600)).not.toBe(true);
      const checkout = result.structuredContent;
      expect([checkout.line_items[0].item.id, checkout.line_items[0].quantity]).toEqual([TWO_PACK, 1]);
    },
  },
  {
    path: '/acp/mcp',
    headers: () => [`Authorization: ${bearer(token).Authorization}`],
    tools: [
      'create_checkout_session',
      'get_checkout_session',
      'update_checkout_session',
      'complete_checkout_session',
      'cancel_checkout_session',
    ],
    call: () => ({
      name: 'create_checkout_session',
      args: {
        meta: { api_version: '2026-04-17', idempotency_key: `inspector-${Date.now()}-${key++}` },
        payload: { line_items: [{ id: TWO_PACK, quantity: 2 }], currency: 'usd', capabilities: {} },
      },
    }),
    result: (result) => {
      expect(result.isError, JSON.stringify(result).slice(0, 600)).toBe(false);
      const session = result.structuredContent;
      expect(session.line_items).toMatchObject([{ item: { id: TWO_PACK }, quantity: 2 }]);
    },
  },
];

describe.skipIf(!nodeServesCli).each(['legacy', 'auto', 'modern'])('MCP Inspector 2.12, protocol era %s', (era) => {
  it.each(SERVERS)(
    '$path: tools/list --strict without a portability warning, and a tools/call',
    async ({ path, headers, tools, call, result }) => {
      const listed = await inspector(path, era, headers(), '--method', 'tools/list', '--strict');
      expect(listed.code, JSON.stringify(listed.output).slice(0, 600)).toBe(0);
      // --strict reports each portability problem on stderr (and a count); none is reported.
      expect(listed.stderr).not.toMatch(/warning|error/i);
      expect(listed.output.result.tools.map((tool: { name: string }) => tool.name)).toEqual(tools);
      expectEra(era, listed.exchanges, 'tools/list');

      const { name, args } = call();
      const called = await inspector(
        path,
        era,
        headers(),
        '--method',
        'tools/call',
        '--tool-name',
        name,
        '--tool-args-json',
        JSON.stringify(args),
      );
      expect(called.code, JSON.stringify(called.output).slice(0, 600)).toBe(0);
      result(called.output.result);
      expectEra(era, called.exchanges, 'tools/call');

      expect(proxy.violations).toEqual([]);
    },
    120_000,
  );
});
