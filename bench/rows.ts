// The benchmarked requests of issues #7 and #15, each with its ceiling. Each is first sent once to the real service,
// which checks it works and captures the response bytes the bare Koa ceiling answers with. Checkout sessions, the
// protocol bindings and the MCP servers are optional (a row whose endpoint is not there is reported unavailable); the
// catalogue is required.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Load } from './load.js';
import type { StoredSession } from './pgbench.js';

/** What a row measures, which sets its targets (bench/report.ts): a REST create is held to more than a protocol's. */
export type RowKind = 'catalog-read' | 'catalog-miss' | 'read' | 'rest-creation' | 'creation' | 'mcp';

/**
 * What a row is measured against in the same round: bare Koa answering the same bytes; pgbench storing the same
 * session once; pgbench replaying the statement that reads the session; or the service's own REST read of the same
 * data (`load`).
 */
export type Ceiling =
  | { kind: 'koa' }
  | { kind: 'pgbench-store'; session: StoredSession }
  | { kind: 'pgbench-read'; sessionId: string }
  | { kind: 'rest-read'; title: string; load: Load };

export interface Fixture {
  status: number;
  contentType: string;
  body: Buffer;
  /** The response's own headers, in order, less those Node writes itself (Date, Connection, Keep-Alive, length). */
  headers: Array<[string, string]>;
}

/** Headers Node's HTTP server writes on every response whatever the application sets. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

export interface ReadyRow {
  state: 'ready';
  title: string;
  kind: RowKind;
  load: Load;
  fixture: Fixture;
  ceiling: Ceiling;
}

export interface UnavailableRow {
  state: 'unavailable';
  title: string;
  kind: RowKind;
  reason: string;
}

export type Row = ReadyRow | UnavailableRow;

export type Prepared = Pick<ReadyRow, 'load' | 'fixture'>;

class Unavailable extends Error {}

const JSON_HEADERS = { 'content-type': 'application/json' };
const PRICE_AND_STOCK = 'fields=*variants.calculated_price,+variants.inventory_quantity';
const TWO_ITEMS: [string, string] = ['variant_01tongue2pack', 'variant_01tonguetravel'];
const PROMO_CODES = ['10OFF'];
const SESSION_BODY = JSON.stringify({
  items: TWO_ITEMS.map((id) => ({ id, quantity: 1 })),
  promo_codes: PROMO_CODES,
});
const MCP_URL = '/catalog/mcp';
const MCP_PROTOCOL_VERSION = '2025-06-18';
const MCP_HEADERS = {
  ...JSON_HEADERS,
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': MCP_PROTOCOL_VERSION,
};

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
    fixture: {
      status: response.status,
      contentType: response.headers.get('content-type') ?? 'application/json',
      body,
      headers: [...response.headers].filter(([name]) => !TRANSPORT_HEADERS.has(name)),
    },
  };
}

function json(fixture: Fixture): Record<string, unknown> {
  return JSON.parse(fixture.body.toString('utf8')) as Record<string, unknown>;
}

export function productList(baseUrl: string): Promise<Prepared> {
  return capture(baseUrl, { method: 'GET', url: `/api/store/products?${PRICE_AND_STOCK}`, headers: {} }, 200);
}

/**
 * Reads of the products list that each mean something else (page size, region, fields selected), more of them than
 * the read cache keeps (src/http/caching.ts, 1,000), sent in turn: each one misses and reads the database, as a client
 * asking for ever new pages would make it. Every one lists both products with their priced variants.
 */
const MISSING_READS = 2_000;
const VARIANT_REMOVALS = ['title', 'sku', 'manage_inventory', 'allow_backorder'];
const PRODUCT_REMOVALS = ['title', 'handle', 'description', 'material', 'thumbnail'];

function missingReadUrls(): string[] {
  const urls: string[] = [];
  for (let meaning = 0; urls.length < MISSING_READS; meaning++) {
    const limit = 2 + (meaning % 99);
    const region = Math.floor(meaning / 99) % 2 === 0 ? 'reg_us' : 'reg_eu';
    const removed = Math.floor(meaning / 198);
    const fields = [
      PRICE_AND_STOCK.slice('fields='.length),
      ...VARIANT_REMOVALS.filter((_field, bit) => removed & (1 << bit)).map((field) => `-variants.${field}`),
      ...PRODUCT_REMOVALS.filter((_field, bit) => removed & (1 << (bit + 4))).map((field) => `-${field}`),
    ].join(',');
    urls.push(`/api/store/products?fields=${fields}&region_id=${region}&limit=${limit}`);
  }
  return urls;
}

export async function missingReads(baseUrl: string): Promise<Prepared> {
  const [first, ...rest] = missingReadUrls();
  const captured = await capture(baseUrl, { method: 'GET', url: first!, headers: {} }, 200);
  return { ...captured, load: { ...captured.load, rotatingUrls: [first!, ...rest] } };
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
export function sessionCreation(baseUrl: string): Promise<Prepared> {
  return capture(
    baseUrl,
    { method: 'POST', url: '/checkout_sessions', headers: JSON_HEADERS, body: SESSION_BODY },
    201,
  );
}

export function sessionId(creation: Fixture): string {
  const { id } = json(creation);
  if (typeof id !== 'string') throw new Unavailable('the created session has no id');
  return id;
}

/**
 * What pgbench stores as the same session: its cart (in the region of the checkout create, `creation`), its two lines,
 * and, under a key, the answer `answered` (the row's own create's) as its key's record, where `surface` keeps it.
 */
function storeCeiling(creation: Fixture, surface: StoredSession['answer'], answered: Fixture): Ceiling | Unavailable {
  const { region_id: regionId } = json(creation);
  if (typeof regionId !== 'string') return new Unavailable('the created session has no region_id');
  return {
    kind: 'pgbench-store',
    session: {
      regionId,
      variantIds: TWO_ITEMS,
      promoCodes: PROMO_CODES,
      answer: surface,
      responseBody: answered.body.toString('utf8'),
    },
  };
}

export function sessionRead(baseUrl: string, id: string): Promise<Prepared> {
  return capture(baseUrl, { method: 'GET', url: `/checkout_sessions/${encodeURIComponent(id)}`, headers: {} }, 200);
}

interface ToolDescription {
  name: string;
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

/**
 * The catalog search tool's name is discovered with tools/list: the first tool whose name contains "search". It is
 * called without arguments, which lists the catalogue: the same data as the products list with prices and stock
 * (`rest`), checked here, so that the REST read is its ceiling.
 */
async function catalogSearch(baseUrl: string, rest: Fixture): Promise<Prepared & { toolName: string }> {
  const headers = await mcpHeaders(baseUrl);
  const listing = await capture(baseUrl, rpcLoad(headers, 'tools/list', {}), 200);
  const tools = (rpcResult(listing.fixture).tools ?? []) as ToolDescription[];
  const tool = tools.find(({ name }) => name.includes('search'));
  if (!tool) throw new Unavailable(`no tool of ${MCP_URL} has "search" in its name`);
  const call = await capture(baseUrl, rpcLoad(headers, 'tools/call', { name: tool.name, arguments: {} }), 200);
  const result = rpcResult(call.fixture) as {
    isError?: boolean;
    content?: Array<{ text?: string }>;
    structuredContent?: unknown;
  };
  if (result.isError)
    throw new Unavailable(`tools/call ${tool.name} is an error: ${(result.content?.[0]?.text ?? '').slice(0, 120)}`);
  if (!isDeepStrictEqual(result.structuredContent, json(rest)))
    throw new Unavailable(`tools/call ${tool.name} without arguments does not answer the products list's data`);
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

/** The same create with an Idempotency-Key, new on every request: the service then also stores the key's answer. */
function keyedSessionCreation(baseUrl: string): Promise<Prepared> {
  return capture(
    baseUrl,
    {
      method: 'POST',
      url: '/checkout_sessions',
      headers: { ...JSON_HEADERS, 'idempotency-key': randomUUID() },
      body: SESSION_BODY,
      freshHeaders: ['idempotency-key'],
    },
    201,
  );
}

/** An OAuth client of the agent surface and a client-credentials token for it. */
export async function agentToken(baseUrl: string, scope: string): Promise<string> {
  const registered = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ scope }),
  });
  if (registered.status !== 201) throw new Unavailable(`POST /oauth/register answered ${registered.status}, not 201`);
  const client = (await registered.json()) as { client_id: string; client_secret: string };
  const basic = Buffer.from(
    `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`,
  ).toString('base64');
  const token = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  });
  if (token.status !== 200) throw new Unavailable(`POST /oauth/token answered ${token.status}, not 200`);
  return ((await token.json()) as { access_token: string }).access_token;
}

const ACP_VERSION = '2026-04-17';

function acpCreation(baseUrl: string, token: string): Promise<Prepared> {
  return capture(
    baseUrl,
    {
      method: 'POST',
      url: '/acp/checkout_sessions',
      headers: {
        ...JSON_HEADERS,
        authorization: `Bearer ${token}`,
        'api-version': ACP_VERSION,
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({
        line_items: TWO_ITEMS.map((id) => ({ id, quantity: 1 })),
        currency: 'usd',
        capabilities: {},
        discounts: { codes: PROMO_CODES },
      }),
      freshHeaders: ['idempotency-key'],
    },
    201,
  );
}

function ucpCreation(baseUrl: string, profileUrl: string): Promise<Prepared> {
  return capture(
    baseUrl,
    {
      method: 'POST',
      url: '/ucp/checkout-sessions',
      headers: {
        ...JSON_HEADERS,
        'ucp-agent': `profile="${profileUrl}"`,
        'request-id': randomUUID(),
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({
        line_items: TWO_ITEMS.map((id) => ({ item: { id }, quantity: 1 })),
        discounts: { codes: PROMO_CODES },
      }),
      freshHeaders: ['request-id', 'idempotency-key'],
    },
    201,
  );
}

function row(title: string, kind: RowKind, prepared: Prepared | Unavailable, ceiling: Ceiling | Unavailable): Row {
  if (prepared instanceof Unavailable) return { state: 'unavailable', title, kind, reason: prepared.message };
  if (ceiling instanceof Unavailable) return { state: 'unavailable', title, kind, reason: ceiling.message };
  return { state: 'ready', title, kind, load: prepared.load, fixture: prepared.fixture, ceiling };
}

export interface RowOptions {
  /** A platform profile the service may fetch, for the UCP rows. */
  ucpProfileUrl: string;
}

export async function prepareRows(baseUrl: string, options: RowOptions): Promise<Row[]> {
  const list = await productList(baseUrl);
  const missing = await missingReads(baseUrl);
  const single = await product(baseUrl, firstProductId(list.fixture));
  const creation = await optional(() => sessionCreation(baseUrl));
  const keyedCreation = await optional(() => keyedSessionCreation(baseUrl));
  const reading =
    creation instanceof Unavailable
      ? new Unavailable('needs POST /checkout_sessions')
      : await optional(() => sessionRead(baseUrl, sessionId(creation.fixture)));
  const token = await optional(() => agentToken(baseUrl, 'cart:write'));
  const acp = token instanceof Unavailable ? token : await optional(() => acpCreation(baseUrl, token));
  const ucp = await optional(() => ucpCreation(baseUrl, options.ucpProfileUrl));
  const search = await optional(() => catalogSearch(baseUrl, list.fixture));
  const searchTitle = `MCP tools/call ${search instanceof Unavailable ? '(catalog search)' : search.toolName} (catalogue)`;
  // Each create against the same session stored once, with its own answer (if it has a key) where its surface keeps it.
  const store = (surface: StoredSession['answer'], answered: Prepared | Unavailable) =>
    creation instanceof Unavailable
      ? creation
      : answered instanceof Unavailable
        ? answered
        : storeCeiling(creation.fixture, surface, answered.fixture);
  return [
    row('GET /api/store/products (prices, stock)', 'catalog-read', list, { kind: 'koa' }),
    row('GET /api/store/products/{id} (prices)', 'catalog-read', single, { kind: 'koa' }),
    row('GET /api/store/products, each read new (cache misses)', 'catalog-miss', missing, {
      kind: 'rest-read',
      title: 'the products list, prices and stock (REST, cached)',
      load: list.load,
    }),
    row('POST /checkout_sessions (2 items, 10OFF)', 'rest-creation', creation, store('none', creation)),
    row(
      'POST /checkout_sessions with Idempotency-Key',
      'rest-creation',
      keyedCreation,
      store('checkout', keyedCreation),
    ),
    row(
      'GET /checkout_sessions/{id}',
      'read',
      reading,
      creation instanceof Unavailable ? creation : { kind: 'pgbench-read', sessionId: sessionId(creation.fixture) },
    ),
    row('POST /ucp/checkout-sessions (2 items, 10OFF)', 'creation', ucp, store('protocol', ucp)),
    row('POST /acp/checkout_sessions (2 items, 10OFF)', 'creation', acp, store('protocol', acp)),
    row(searchTitle, 'mcp', search, {
      kind: 'rest-read',
      title: 'the products list, prices and stock (REST)',
      load: list.load,
    }),
  ];
}
