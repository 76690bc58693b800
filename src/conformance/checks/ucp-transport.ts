// UCP's shopping operations over either transport the merchant advertises: REST (the rest.openapi.json binding) and
// MCP (the mcp.openrpc.json tools, JSON-RPC over streamable HTTP). The checks are written once against this interface
// and run on each transport. Every checkout or error body received is validated here against the tested version's
// schemas; a body that breaks them fails the check that received it.
import { randomUUID } from 'node:crypto';
import { describeAnswer, type Answer, type HttpClient, type Json } from '../client.js';
import type { SchemaSet } from '../schemas.js';
import { CheckFailure } from './check.js';

export type UcpTransportName = 'rest' | 'mcp';

export interface UcpCallOptions {
  /** The platform profile URL to send (default: the full profile). */
  profile?: string;
  idempotencyKey?: string;
  /** REST only: header overrides; a value of null removes the header. */
  headers?: Record<string, string | null>;
  /** REST only: the raw request body (to send a differently-serialized equal body). */
  rawBody?: string;
}

export interface UcpOutcome {
  answer: Answer;
  /** The HTTP status (REST), or the HTTP status of the JSON-RPC exchange (MCP). */
  status: number;
  /** The UCP body: the REST body, or the MCP tool result's structuredContent. */
  body: Json;
  /** A JSON-RPC error (MCP) or a non-2xx status (REST): a protocol error, not a business outcome. */
  protocolError: boolean;
}

export interface UcpTransport {
  name: UcpTransportName;
  endpoint: string;
  create(checkout: Json, options?: UcpCallOptions): Promise<UcpOutcome>;
  get(id: string, options?: UcpCallOptions): Promise<UcpOutcome>;
  update(id: string, checkout: Json, options?: UcpCallOptions): Promise<UcpOutcome>;
  complete(id: string, checkout: Json, options?: UcpCallOptions): Promise<UcpOutcome>;
  cancel(id: string, options?: UcpCallOptions): Promise<UcpOutcome>;
}

export interface UcpTransportSetup {
  client: HttpClient;
  schemas: SchemaSet;
  endpoint: string;
  /** The profile sent when a call names none. */
  profile: string;
  /** Every successful checkout received, for the totals check. */
  checkouts: Json[];
  /** Counts schema problems for the summary. */
  onSchemaErrors: (count: number) => void;
}

/** Validates a UCP checkout-or-error body; throws the first problem as the check's failure. */
export function validateUcpBody(setup: UcpTransportSetup, answer: Answer, body: Json, what: string): void {
  const { schemas } = setup;
  const names = ['checkout_response'];
  if (body?.ucp?.status !== 'error' && body?.ucp?.capabilities?.['dev.ucp.shopping.discount'])
    names.push('checkout_with_discount');
  if (body?.ucp?.status !== 'error' && body?.ucp?.capabilities?.['dev.ucp.shopping.fulfillment'])
    names.push('checkout_with_fulfillment');
  for (const name of names) {
    const problems = schemas.problems(name, body);
    if (problems.length) {
      setup.onSchemaErrors(problems.length);
      throw new CheckFailure(
        `expected ${what} valid against UCP ${schemas.version} ${name}, got ${describeAnswer(answer)}; ${problems.length} schema errors, first: ${problems[0]!.path} ${problems[0]!.message}`,
      );
    }
  }
  if (body?.ucp?.status !== 'error' && typeof body?.id === 'string') setup.checkouts.push(body);
}

export function restTransport(setup: UcpTransportSetup): UcpTransport {
  const base = setup.endpoint.replace(/\/+$/, '');
  const send = async (method: string, path: string, body: Json, options: UcpCallOptions = {}) => {
    const headers: Record<string, string> = {
      'UCP-Agent': `profile="${options.profile ?? setup.profile}"`,
      'Request-Id': randomUUID(),
      Accept: 'application/json',
      ...(method !== 'GET' ? { 'Idempotency-Key': options.idempotencyKey ?? randomUUID() } : {}),
      ...(body !== undefined || options.rawBody ? { 'Content-Type': 'application/json' } : {}),
    };
    for (const [name, value] of Object.entries(options.headers ?? {}))
      if (value === null) delete headers[name];
      else headers[name] = value;
    const answer = await setup.client.request(`${base}${path}`, {
      method,
      headers,
      body: options.rawBody ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const ok = answer.status === 200 || answer.status === 201;
    if (ok) validateUcpBody(setup, answer, answer.body, `a ${method} ${path.replace(/\/[^/]+/g, '/…')} body`);
    return { answer, status: answer.status, body: answer.body, protocolError: !ok };
  };
  const path = (id: string) => `/checkout-sessions/${encodeURIComponent(id)}`;
  return {
    name: 'rest',
    endpoint: base,
    create: (checkout, options) => send('POST', '/checkout-sessions', checkout, options),
    get: (id, options) => send('GET', path(id), undefined, options),
    update: (id, checkout, options) => send('PUT', path(id), checkout, options),
    complete: (id, checkout, options) => send('POST', `${path(id)}/complete`, checkout, options),
    cancel: (id, options) => send('POST', `${path(id)}/cancel`, undefined, options),
  };
}

/** The JSON-RPC message of an MCP answer: a JSON body, or the last `data:` event of a text/event-stream. */
export function jsonRpcMessage(answer: Answer): Json {
  if (answer.body !== undefined) return answer.body;
  const events = answer.text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim());
  try {
    return events.length ? JSON.parse(events.at(-1)!) : undefined;
  } catch {
    return undefined;
  }
}

export interface McpSession {
  /** Sends one JSON-RPC request; answers the HTTP exchange and its JSON-RPC message. */
  rpc(method: string, params?: Json): Promise<{ answer: Answer; message: Json }>;
}

/** An MCP client session over streamable HTTP: initialize once, then requests with the session id, if any. */
/** An MCP session with `endpoint` (initialized on first use); `headers` go with every request (ACP's bearer token). */
export function mcpSession(client: HttpClient, endpoint: string, headers: Record<string, string> = {}): McpSession {
  let sessionId: string | null | undefined;
  let nextId = 1;
  const post = (payload: Json) =>
    client.request(endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-06-18',
        ...(sessionId ? { 'Mcp-Session-Id': sessionId } : {}),
        ...headers,
      },
      body: JSON.stringify(payload),
    });
  const initialize = async () => {
    const answer = await post({
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'storefront-conformance', version: '1.0.0' },
      },
    });
    const message = jsonRpcMessage(answer);
    if (answer.status !== 200 || !message?.result)
      throw new CheckFailure(`expected an MCP initialize result, got ${describeAnswer(answer)}`);
    sessionId = answer.headers.get('mcp-session-id');
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  };
  return {
    async rpc(method, params) {
      if (sessionId === undefined) await initialize();
      const answer = await post({ jsonrpc: '2.0', id: nextId++, method, params });
      return { answer, message: jsonRpcMessage(answer) };
    },
  };
}

export function mcpTransport(setup: UcpTransportSetup): UcpTransport {
  const session = mcpSession(setup.client, setup.endpoint);
  const call = async (tool: string, args: Json, options: UcpCallOptions = {}) => {
    const meta = {
      'ucp-agent': { profile: options.profile ?? setup.profile },
      ...(tool === 'get_checkout' ? {} : { 'idempotency-key': options.idempotencyKey ?? randomUUID() }),
    };
    const { answer, message } = await session.rpc('tools/call', { name: tool, arguments: { meta, ...args } });
    const result = message?.result;
    if (!result || message.error) return { answer, status: answer.status, body: message, protocolError: true };
    const body = result.structuredContent;
    if (body === undefined)
      throw new CheckFailure(`expected ${tool} to answer structuredContent, got ${describeAnswer(answer)}`);
    validateUcpBody(setup, answer, body, `${tool}'s structuredContent`);
    return { answer, status: answer.status, body, protocolError: false };
  };
  return {
    name: 'mcp',
    endpoint: setup.endpoint,
    create: (checkout, options) => call('create_checkout', { checkout }, options),
    get: (id, options) => call('get_checkout', { id }, options),
    // Over MCP the checkout is named by the id argument, not inside the checkout object.
    update: (id, { id: _id, ...checkout }, options) => call('update_checkout', { id, checkout }, options),
    complete: (id, { id: _id, ...checkout }, options) => call('complete_checkout', { id, checkout }, options),
    cancel: (id, options) => call('cancel_checkout', { id }, options),
  };
}
