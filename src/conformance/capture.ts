// A scripted session on each binding (UCP REST, UCP MCP, ACP REST) against any deployment: create with 10OFF, with an
// invalid code, in EUR, in JPY and with a buyer, then update, get, complete and cancel the 10OFF session. Every
// response body (for MCP, the structuredContent or JSON-RPC error data) is validated against the copied protocol schemas
// with the runner's validator, and one line per response gives its status and error count.
import { randomUUID } from 'node:crypto';
import { HttpClient } from './client.js';
import { ACP_VERSION, bodyProblems as protocolBodyProblems, storeAcpToken, TWO_PACK } from './checks/store-session.js';
import { servePlatformProfiles, type ProfileServer } from './profile.js';
import { schemaSets, type SchemaProblem } from './schemas.js';

export interface CaptureOptions {
  baseUrl: string;
  /** A platform profile URL the store can fetch (else one is served on 127.0.0.1). */
  profileUrl?: string;
  log?: (line: string) => void;
}

export interface CaptureResult {
  responses: number;
  errors: number;
  /** `binding scenario` → schema errors of its response. */
  scenarios: Map<string, number>;
}

type Json = any;

interface Scenario {
  name: string;
  /** The request: a body, or (for follow-ups) a function of the 10OFF session's id. */
  request: (sessionId: string) => { method: string; path: string; body?: unknown };
}

const lines = (quantity: number) => [{ item: { id: TWO_PACK }, quantity }];
const BUYER = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', phone_number: '+15555550100' };

function ucpScenarios(base: string): Scenario[] {
  const create = (body: unknown) => () => ({ method: 'POST', path: `${base}`, body });
  return [
    { name: 'create 10OFF', request: create({ line_items: lines(2), discounts: { codes: ['10OFF'] } }) },
    { name: 'create invalid code', request: create({ line_items: lines(2), discounts: { codes: ['NOPE99'] } }) },
    { name: 'create EUR', request: create({ line_items: lines(2), context: { address_country: 'DE' } }) },
    { name: 'create JPY', request: create({ line_items: lines(1), context: { address_country: 'JP' } }) },
    { name: 'create buyer', request: create({ line_items: lines(1), buyer: BUYER }) },
    {
      name: 'update',
      request: (id) => ({
        method: 'PUT',
        path: `${base}/${id}`,
        body: { line_items: lines(3), discounts: { codes: ['10OFF'] }, buyer: BUYER },
      }),
    },
    { name: 'get', request: (id) => ({ method: 'GET', path: `${base}/${id}` }) },
    {
      name: 'complete',
      request: (id) => ({ method: 'POST', path: `${base}/${id}/complete`, body: { payment: { instruments: [] } } }),
    },
    { name: 'cancel', request: (id) => ({ method: 'POST', path: `${base}/${id}/cancel` }) },
  ];
}

function acpScenarios(): Scenario[] {
  const base = '/acp/checkout_sessions';
  const line = (quantity: number) => [{ id: TWO_PACK, quantity }];
  const create = (body: Record<string, unknown>) => () => ({
    method: 'POST',
    path: base,
    body: { line_items: line(2), currency: 'usd', capabilities: {}, ...body },
  });
  return [
    { name: 'create 10OFF', request: create({ discounts: { codes: ['10OFF'] } }) },
    { name: 'create invalid code', request: create({ discounts: { codes: ['NOPE99'] } }) },
    { name: 'create EUR', request: create({ currency: 'eur' }) },
    { name: 'create JPY', request: create({ currency: 'jpy', line_items: line(1) }) },
    { name: 'create buyer', request: create({ line_items: line(1), buyer: BUYER }) },
    { name: 'update', request: (id) => ({ method: 'POST', path: `${base}/${id}`, body: { line_items: line(3) } }) },
    { name: 'get', request: (id) => ({ method: 'GET', path: `${base}/${id}` }) },
    {
      name: 'complete',
      request: (id) => ({
        method: 'POST',
        path: `${base}/${id}/complete`,
        body: { payment_data: { purchase_order_number: 'PO-1' } },
      }),
    },
    { name: 'cancel', request: (id) => ({ method: 'POST', path: `${base}/${id}/cancel`, body: {} }) },
  ];
}

/** The MCP tool call a UCP REST request stands for. */
function mcpCall(request: { method: string; path: string; body?: unknown }, profile: string) {
  const [, , , id, action] = request.path.split('/');
  const name =
    request.method === 'POST' && !id
      ? 'create_checkout'
      : request.method === 'GET'
        ? 'get_checkout'
        : request.method === 'PUT'
          ? 'update_checkout'
          : `${action}_checkout`;
  return {
    name,
    arguments: {
      meta: { 'ucp-agent': { profile }, 'idempotency-key': randomUUID() },
      ...(id ? { id } : {}),
      ...(request.body === undefined ? {} : { checkout: request.body }),
    },
  };
}

export async function captureSessions(options: CaptureOptions): Promise<CaptureResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const base = options.baseUrl.replace(/\/+$/, '');
  const result: CaptureResult = { responses: 0, errors: 0, scenarios: new Map() };
  const sets = schemaSets();
  let profileServer: ProfileServer | undefined;
  let profile = options.profileUrl;
  if (!profile) {
    const served = await servePlatformProfiles();
    profileServer = served.server;
    profile = `${served.base}/full.json`;
  }

  function record(binding: string, scenario: string, status: number, problems: SchemaProblem[]) {
    result.responses += 1;
    result.errors += problems.length;
    result.scenarios.set(`${binding} ${scenario}`, problems.length);
    log(
      `${binding.padEnd(8)} ${scenario.padEnd(20)} ${status} ${problems.length} errors${problems[0] ? `; first: ${problems[0].path} ${problems[0].message}` : ''}`,
    );
  }

  async function send(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Json) : undefined };
  }

  /** Runs the scenarios of one binding; `run` answers the status and the body to validate for a request. */
  async function session(
    binding: string,
    scenarios: Scenario[],
    run: (request: { method: string; path: string; body?: unknown }) => Promise<{ status: number; body: Json }>,
    problemsOf: (path: string, answer: { status: number; body: Json }) => SchemaProblem[] = (path, answer) =>
      protocolBodyProblems(sets, path, answer.status, answer.body),
  ) {
    let sessionId = '';
    for (const scenario of scenarios) {
      const request = scenario.request(sessionId);
      const answer = await run(request);
      if (!sessionId) sessionId = answer.body?.id ?? '';
      record(binding, scenario.name, answer.status, problemsOf(request.path, answer));
    }
  }

  try {
    const ucpHeaders = () => ({
      'UCP-Agent': `profile="${profile}"`,
      'Request-Id': randomUUID(),
      'Idempotency-Key': randomUUID(),
      'Content-Type': 'application/json',
    });
    await session('ucp-rest', ucpScenarios('/ucp/checkout-sessions'), async (request) => {
      return send(request.method, request.path, ucpHeaders(), request.body);
    });

    let rpcId = 0;
    await session(
      'ucp-mcp',
      ucpScenarios('/ucp/checkout-sessions'),
      async (request) => {
        const answer = await send(
          'POST',
          '/ucp/mcp',
          { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
          { jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: mcpCall(request, profile!) },
        );
        return { status: answer.status, body: answer.body?.result?.structuredContent ?? answer.body };
      },
      // A tool result carries the REST body (validated as a checkout answer); a JSON-RPC error is no checkout.
      (path, answer) =>
        answer.body?.jsonrpc === undefined
          ? protocolBodyProblems(sets, path, 200, answer.body)
          : [{ path: '/error', message: `JSON-RPC error ${JSON.stringify(answer.body.error)}` }],
    );

    const token = await storeAcpToken(new HttpClient(), base);
    const acpHeaders = () => ({
      Authorization: `Bearer ${token}`,
      'API-Version': ACP_VERSION,
      'Idempotency-Key': randomUUID(),
      'Content-Type': 'application/json',
    });
    await session('acp', acpScenarios(), async (request) => {
      return send(request.method, request.path, acpHeaders(), request.body);
    });
  } finally {
    await profileServer?.close();
  }
  log(`${result.responses} responses captured, ${result.errors} schema errors`);
  return result;
}
