// The five benchmarked requests of issue #7. Each is first sent once to the real service, which checks it works and
// captures the response bytes the ceiling server answers with. Checkout sessions and the MCP servers are optional
// (a row whose endpoint is not there is reported unavailable); the catalogue is required.
import type { Load } from './load.js';

export type RowKind = 'catalog-read' | 'read' | 'creation';

export interface Fixture {
  status: number;
  contentType: string;
  body: Buffer;
}

export interface ReadyRow {
  state: 'ready';
  title: string;
  kind: RowKind;
  load: Load;
  fixture: Fixture;
}

export interface UnavailableRow {
  state: 'unavailable';
  title: string;
  kind: RowKind;
  reason: string;
}

export type Row = ReadyRow | UnavailableRow;

type Prepared = Pick<ReadyRow, 'load' | 'fixture'>;

class Unavailable extends Error {}

const JSON_HEADERS = { 'content-type': 'application/json' };
const PRICE_AND_STOCK = 'fields=*variants.calculated_price,+variants.inventory_quantity';
const SESSION_BODY = JSON.stringify({
  items: [
    { id: 'variant_01tongue2pack', quantity: 1 },
    { id: 'variant_01tonguetravel', quantity: 1 },
  ],
  promo_codes: ['10OFF'],
});
const MCP_URL = '/catalog/mcp';
const MCP_PROTOCOL_VERSION = '2025-06-18';
const MCP_HEADERS = {
  ...JSON_HEADERS,
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': MCP_PROTOCOL_VERSION,
};
const SEARCH_TERM = 'scraper';

/** Sends the request once and keeps the response as the fixture, if it has the expected status. */
async function capture(baseUrl: string, load: Load, expectedStatus: number): Promise<Prepared> {
  const response = await fetch(baseUrl + load.url, { method: load.method, headers: load.headers, body: load.body });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== expectedStatus) {
    throw new Unavailable(
      `${load.method} ${load.url.split('?')[0]} answered ${response.status}, not ${expectedStatus}`,
    );
  }
  return {
    load,
    fixture: { status: response.status, contentType: response.headers.get('content-type') ?? 'application/json', body },
  };
}

function json(fixture: Fixture): Record<string, unknown> {
  return JSON.parse(fixture.body.toString('utf8')) as Record<string, unknown>;
}

function productList(baseUrl: string): Promise<Prepared> {
  return capture(baseUrl, { method: 'GET', url: `/api/store/products?${PRICE_AND_STOCK}`, headers: {} }, 200);
}

function firstProductId(list: Fixture): string {
  const [product] = json(list).products as Array<{ id: string }>;
  if (!product) throw new Error('the catalogue lists no product');
  return product.id;
}

function product(baseUrl: string, id: string): Promise<Prepared> {
  return capture(
    baseUrl,
    { method: 'GET', url: `/api/store/products/${id}?fields=*variants.calculated_price`, headers: {} },
    200,
  );
}

// No Idempotency-Key: under load every request creates a session of its own.
function sessionCreation(baseUrl: string): Promise<Prepared> {
  return capture(
    baseUrl,
    { method: 'POST', url: '/checkout_sessions', headers: JSON_HEADERS, body: SESSION_BODY },
    201,
  );
}

function sessionId(creation: Fixture): string {
  const { id } = json(creation);
  if (typeof id !== 'string') throw new Unavailable('the created session has no id');
  return id;
}

function sessionRead(baseUrl: string, id: string): Promise<Prepared> {
  return capture(baseUrl, { method: 'GET', url: `/checkout_sessions/${encodeURIComponent(id)}`, headers: {} }, 200);
}

interface ToolDescription {
  name: string;
  inputSchema?: { properties?: Record<string, { type?: string }>; required?: string[] };
}

/** The JSON-RPC result in an MCP response, whether it came as JSON or as a server-sent event. */
function rpcResult(fixture: Fixture): Record<string, unknown> {
  const text = fixture.body.toString('utf8');
  const payload = fixture.contentType.startsWith('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5))
        .join('')
    : text;
  const message = JSON.parse(payload) as { result?: Record<string, unknown>; error?: { message: string } };
  if (!message.result) throw new Unavailable(`MCP error: ${message.error?.message ?? 'no result'}`);
  return message.result;
}

function rpcLoad(headers: Record<string, string>, method: string, params: object): Load {
  return { method: 'POST', url: MCP_URL, headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) };
}

/** Initialises an MCP session; the headers it returns carry the session id when the server issues one. */
async function mcpHeaders(baseUrl: string): Promise<Record<string, string>> {
  const initialize = rpcLoad(MCP_HEADERS, 'initialize', {
    protocolVersion: MCP_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'storefront-bench', version: '1.0.0' },
  });
  const response = await fetch(baseUrl + MCP_URL, {
    method: 'POST',
    headers: initialize.headers,
    body: initialize.body,
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Unavailable(`POST ${MCP_URL} initialize answered ${response.status}, not 200`);
  const sessionHeader = response.headers.get('mcp-session-id');
  const headers = sessionHeader ? { ...MCP_HEADERS, 'mcp-session-id': sessionHeader } : MCP_HEADERS;
  const initialized = await fetch(baseUrl + MCP_URL, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  await initialized.arrayBuffer();
  return headers;
}

// The tool's argument names are not fixed either: fill its required string arguments, and a query-like one, with a term.
function searchArguments(tool: ToolDescription): Record<string, string> {
  const required = new Set(tool.inputSchema?.required ?? []);
  const strings = Object.entries(tool.inputSchema?.properties ?? {}).filter(([, schema]) => schema.type === 'string');
  return Object.fromEntries(
    strings
      .filter(([name]) => required.has(name) || /^(q|query|search|term|text)$/.test(name))
      .map(([name]) => [name, SEARCH_TERM]),
  );
}

/** The catalog search tool's name is discovered with tools/list: the first tool whose name contains "search". */
async function catalogSearch(baseUrl: string): Promise<Prepared & { toolName: string }> {
  const headers = await mcpHeaders(baseUrl);
  const listing = await capture(baseUrl, rpcLoad(headers, 'tools/list', {}), 200);
  const tools = (rpcResult(listing.fixture).tools ?? []) as ToolDescription[];
  const tool = tools.find(({ name }) => name.includes('search'));
  if (!tool) throw new Unavailable(`no tool of ${MCP_URL} has "search" in its name`);
  const call = await capture(
    baseUrl,
    rpcLoad(headers, 'tools/call', { name: tool.name, arguments: searchArguments(tool) }),
    200,
  );
  const result = rpcResult(call.fixture) as { isError?: boolean; content?: Array<{ text?: string }> };
  if (result.isError)
    throw new Unavailable(`tools/call ${tool.name} is an error: ${(result.content?.[0]?.text ?? '').slice(0, 120)}`);
  return { ...call, toolName: tool.name };
}

async function optional<T>(prepare: () => Promise<T>): Promise<T | Unavailable> {
  try {
    return await prepare();
  } catch (error) {
    if (error instanceof Unavailable) return error;
    throw error;
  }
}

function row(title: string, kind: RowKind, prepared: Prepared | Unavailable): Row {
  return prepared instanceof Unavailable
    ? { state: 'unavailable', title, kind, reason: prepared.message }
    : { state: 'ready', title, kind, load: prepared.load, fixture: prepared.fixture };
}

export async function prepareRows(baseUrl: string): Promise<Row[]> {
  const list = await productList(baseUrl);
  const single = await product(baseUrl, firstProductId(list.fixture));
  const creation = await optional(() => sessionCreation(baseUrl));
  const reading =
    creation instanceof Unavailable
      ? new Unavailable('needs POST /checkout_sessions')
      : await optional(() => sessionRead(baseUrl, sessionId(creation.fixture)));
  const search = await optional(() => catalogSearch(baseUrl));
  return [
    row('GET /api/store/products (prices, stock)', 'catalog-read', list),
    row('GET /api/store/products/{id} (prices)', 'catalog-read', single),
    row('POST /checkout_sessions (2 items, 10OFF)', 'creation', creation),
    row('GET /checkout_sessions/{id}', 'read', reading),
    row(
      `MCP tools/call ${search instanceof Unavailable ? '(catalog search)' : search.toolName}`,
      'catalog-read',
      search,
    ),
  ];
}
