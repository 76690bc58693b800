// A black-box conformance runner for the /ucp and /acp bindings (the U- and A- checks of the design), usable against
// any deployment: every response body is validated against the protocols' own schemas (protocols/), one line is
// printed per check, and the counts at the end. UCP needs a platform profile the store can fetch: by default the runner
// serves one on 127.0.0.1 (the store must allow it in UCP_INSECURE_PROFILE_HOSTS), or pass --profile-url.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { protocolBodyProblems } from '../protocols/responses.js';
import { acpTotalsProblems, ucpTotalsProblems } from './invariants.js';

export const UCP_VERSION = '2026-04-08';
export const ACP_VERSION = '2026-04-17';
export const TWO_PACK = 'variant_01tongue2pack';

const capability = (name: string, extra: Record<string, unknown> = {}) => ({
  version: UCP_VERSION,
  spec: `https://ucp.dev/${UCP_VERSION}/specification/${name}`,
  schema: `https://ucp.dev/${UCP_VERSION}/schemas/shopping/${name}.json`,
  ...extra,
});

/** A valid UCP platform profile (checkout and discount by default). */
export function platformProfile(options: { version?: string; checkout?: boolean; discount?: boolean } = {}) {
  const { version = UCP_VERSION, checkout = true, discount = true } = options;
  return {
    ucp: {
      version,
      services: {
        'dev.ucp.shopping': [
          {
            version,
            spec: `https://ucp.dev/${UCP_VERSION}/specification/overview`,
            transport: 'rest',
            schema: `https://ucp.dev/${UCP_VERSION}/services/shopping/rest.openapi.json`,
          },
        ],
      },
      capabilities: {
        ...(checkout ? { 'dev.ucp.shopping.checkout': [capability('checkout')] } : {}),
        ...(discount
          ? { 'dev.ucp.shopping.discount': [capability('discount', { extends: 'dev.ucp.shopping.checkout' })] }
          : {}),
        ...(!checkout && !discount ? { 'dev.ucp.shopping.order': [capability('order')] } : {}),
      },
      payment_handlers: {},
    },
  };
}

/**
 * Serves platform profiles on 127.0.0.1 for a store to fetch (it must list 127.0.0.1 in UCP_INSECURE_PROFILE_HOSTS):
 * `/full.json`, `/no-checkout.json`, `/no-discount.json`, `/old.json`; anything else is a 404.
 */
export async function servePlatformProfiles(): Promise<{ server: Server; base: string }> {
  const profiles: Record<string, unknown> = {
    '/full.json': platformProfile(),
    '/no-checkout.json': platformProfile({ checkout: false, discount: false }),
    '/no-discount.json': platformProfile({ discount: false }),
    '/old.json': platformProfile({ version: '2026-01-23' }),
  };
  const server = createServer((request, response) => {
    const found = profiles[(request.url ?? '').split('?')[0]!];
    response.writeHead(found ? 200 : 404, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(found ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export interface RunnerOptions {
  baseUrl: string;
  protocol?: 'ucp' | 'acp';
  /** The store runs UCP_PLATFORM_PROFILE_POLICY=lenient: negotiation checks are skipped. */
  lenient?: boolean;
  /** A platform profile URL the store can fetch (else one is served on 127.0.0.1). */
  profileUrl?: string;
  log?: (line: string) => void;
}

export interface RunnerResult {
  pass: number;
  fail: number;
  skip: number;
  responses: number;
  schemaErrors: number;
  failures: string[];
}

type Json = any;

class CheckFailed extends Error {}
class Skipped extends Error {}

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new CheckFailed(message);
}

export async function runConformance(options: RunnerOptions): Promise<RunnerResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const base = options.baseUrl.replace(/\/+$/, '');
  const result: RunnerResult = { pass: 0, fail: 0, skip: 0, responses: 0, schemaErrors: 0, failures: [] };

  async function call(
    path: string,
    init: RequestInit = {},
  ): Promise<{ status: number; headers: Headers; text: string; body: Json }> {
    const response = await fetch(`${base}${path}`, init);
    const text = await response.text();
    let body: Json;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    result.responses += 1;
    const problems =
      path === '/ucp/mcp' ? [] : protocolBodyProblems(new URL(`${base}${path}`).pathname, response.status, body);
    if (problems.length) {
      result.schemaErrors += problems.length;
      throw new CheckFailed(
        `${init.method ?? 'GET'} ${path} → ${response.status}: ${problems.length} schema errors, first: ${problems[0]!.path} ${problems[0]!.message}`,
      );
    }
    const pathname = new URL(`${base}${path}`).pathname;
    if (response.status < 300 && pathname.startsWith('/ucp/checkout-sessions') && body?.ucp?.status === 'success')
      ucpCheckouts.push(body);
    if (response.status < 300 && pathname.startsWith('/acp/checkout_sessions')) acpSessions.push(body);
    return { status: response.status, headers: response.headers, text, body };
  }
  /** Every checkout and session received, for the invariants (U-C2, A-C3), checked after the other checks. */
  const ucpCheckouts: Json[] = [];
  const acpSessions: Json[] = [];

  const checks: Array<[string, 'ucp' | 'acp', () => Promise<void>]> = [];
  const check = (id: string, protocol: 'ucp' | 'acp', run: () => Promise<void>) => checks.push([id, protocol, run]);

  // UCP: the platform profiles the store fetches.
  let profileServer: Server | undefined;
  let profile = options.profileUrl;
  let profileBase: string | undefined;
  const wantsUcp = options.protocol !== 'acp';
  if (wantsUcp && !profile) {
    ({ server: profileServer, base: profileBase } = await servePlatformProfiles());
    profile = `${profileBase}/full.json`;
  }
  const ucpHeaders = (agent = profile!, extra: Record<string, string> = {}): Record<string, string> => ({
    'UCP-Agent': `profile="${agent}"`,
    'Request-Id': randomUUID(),
    'Idempotency-Key': randomUUID(),
    'Content-Type': 'application/json',
    ...extra,
  });
  const ucpCreate = (body: unknown, headers = ucpHeaders()) =>
    call('/ucp/checkout-sessions', { method: 'POST', headers, body: JSON.stringify(body) });
  const totalsOf = (totals: Json[]) => totals.map((total: Json) => [total.type, total.amount]);
  const lines = (quantity = 2) => ({ line_items: [{ item: { id: TWO_PACK }, quantity }] });

  check('U-D1', 'ucp', async () => {
    const { status, body } = await call('/.well-known/ucp');
    assert(status === 200, `status ${status}`);
    const services = body.ucp.services['dev.ucp.shopping']
      .map((service: Json) => service.transport)
      .sort()
      .join(',');
    assert(services === 'mcp,rest', `services ${services}`);
    assert(
      Object.keys(body.ucp.capabilities).sort().join(',') === 'dev.ucp.shopping.checkout,dev.ucp.shopping.discount',
      'capabilities',
    );
  });
  check('U-D2', 'ucp', async () => {
    const first = await call('/.well-known/ucp');
    const second = await call('/.well-known/ucp', {
      headers: { 'UCP-Agent': 'profile="https://x.example/p";version="2099-01-01"' },
    });
    assert(first.text === second.text, 'body differs with UCP-Agent');
    assert(
      first.headers.get('cache-control') === 'public, max-age=300',
      `Cache-Control ${first.headers.get('cache-control')}`,
    );
  });
  check('U-N1', 'ucp', async () => {
    const { status, body } = await ucpCreate(lines(), ucpHeaders(undefined, { 'UCP-Agent': 'garbage;;' }));
    assert(status === 400 && body.code === 'invalid_profile_url', `${status} ${body?.code}`);
  });
  check('U-N2', 'ucp', async () => {
    if (options.lenient || !profileBase) throw new Skipped('lenient policy or external profile');
    const missing = await ucpCreate(lines(), ucpHeaders(`${profileBase}/missing.json`));
    assert(missing.status === 424 && missing.body.code === 'profile_unreachable', `missing: ${missing.status}`);
    const old = await ucpCreate(lines(), ucpHeaders(`${profileBase}/old.json`));
    assert(old.status === 422 && old.body.code === 'version_unsupported', `old: ${old.status}`);
  });
  check('U-N3', 'ucp', async () => {
    if (options.lenient || !profileBase) throw new Skipped('lenient policy or external profile');
    const { status, body } = await ucpCreate(lines(), ucpHeaders(`${profileBase}/no-checkout.json`));
    assert(status === 200 && body.messages[0].code === 'capabilities_incompatible', `${status}`);
  });
  check('U-N4', 'ucp', async () => {
    if (options.lenient || !profileBase) throw new Skipped('lenient policy or external profile');
    const { status, body } = await ucpCreate(
      { ...lines(), discounts: { codes: ['10OFF'] } },
      ucpHeaders(`${profileBase}/no-discount.json`),
    );
    assert(status === 201 && body.discounts === undefined, `${status}`);
    assert(
      body.messages.some((message: Json) => message.code === 'discount_not_negotiated'),
      'no discount_not_negotiated warning',
    );
  });
  check('U-H1', 'ucp', async () => {
    const headers: Record<string, string> = ucpHeaders();
    delete headers['Idempotency-Key'];
    const noKey = await ucpCreate(lines(), headers);
    assert(noKey.status === 400 && noKey.body.code === 'idempotency_key_required', `${noKey.status}`);
    const badId = await ucpCreate(lines(), ucpHeaders(undefined, { 'Request-Id': 'nope' }));
    assert(badId.status === 400 && badId.body.code === 'invalid_request_id', `${badId.status}`);
  });
  check('U-C1', 'ucp', async () => {
    const { status, body } = await ucpCreate({ ...lines(), discounts: { codes: ['10OFF'] } });
    assert(
      status === 201 && body.status === 'requires_escalation' && body.currency === 'USD',
      `${status} ${body.status}`,
    );
    assert(
      JSON.stringify(totalsOf(body.totals)) ===
        JSON.stringify([
          ['subtotal', 2598],
          ['items_discount', -260],
          ['fulfillment', 495],
          ['tax', 170],
          ['total', 3003],
        ]),
      `totals ${JSON.stringify(totalsOf(body.totals))}`,
    );
  });
  check('U-C3', 'ucp', async () => {
    const { body } = await ucpCreate({
      line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
      context: { address_country: 'JP' },
      discounts: { codes: ['10OFF'] },
    });
    assert(
      JSON.stringify(totalsOf(body.totals)) ===
        JSON.stringify([
          ['subtotal', 1900],
          ['items_discount', -190],
          ['fulfillment', 600],
          ['tax', 171],
          ['total', 2481],
        ]),
      `JPY totals ${JSON.stringify(totalsOf(body.totals))}`,
    );
  });
  check('U-C4', 'ucp', async () => {
    const { body } = await ucpCreate({ ...lines(), discounts: { codes: ['NOPE99'] } });
    assert(
      body.messages.some(
        (message: Json) => message.code === 'discount_code_invalid' && message.path === '$.discounts.codes[0]',
      ),
      'no discount_code_invalid warning',
    );
  });
  check('U-C7', 'ucp', async () => {
    const { status, body } = await ucpCreate({ line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }] });
    assert(status === 200 && body.ucp.status === 'error' && body.messages[0].code === 'not_found', `${status}`);
  });
  check('U-C8', 'ucp', async () => {
    const { status, body } = await ucpCreate({ line_items: [{ item: { id: TWO_PACK }, quantity: 0 }] });
    assert(status === 400 && body.code === 'invalid_request', `${status}`);
  });
  check('U-G1', 'ucp', async () => {
    const created = await ucpCreate(lines());
    const read = await call(`/ucp/checkout-sessions/${created.body.id}`, { headers: ucpHeaders() });
    assert(read.text === created.text, 'GET differs from create');
    const unknown = await call('/ucp/checkout-sessions/cart_nope', { headers: ucpHeaders() });
    assert(unknown.status === 200 && unknown.body.messages[0].code === 'not_found', `${unknown.status}`);
  });
  check('U-U1', 'ucp', async () => {
    const created = await ucpCreate(lines(1));
    const updated = await call(`/ucp/checkout-sessions/${created.body.id}`, {
      method: 'PUT',
      headers: ucpHeaders(),
      body: JSON.stringify(lines(3)),
    });
    assert(
      updated.status === 200 &&
        updated.body.line_items[0].id === created.body.line_items[0].id &&
        updated.body.line_items[0].quantity === 3,
      'line not kept',
    );
  });
  check('U-P1/U-X1/U-U3', 'ucp', async () => {
    const created = await ucpCreate(lines(1));
    const path = `/ucp/checkout-sessions/${created.body.id}`;
    const completed = await call(`${path}/complete`, {
      method: 'POST',
      headers: ucpHeaders(),
      body: JSON.stringify({ payment: {} }),
    });
    assert(
      completed.status === 200 && completed.body.status === 'requires_escalation' && !completed.body.order,
      'complete',
    );
    const canceled = await call(`${path}/cancel`, { method: 'POST', headers: ucpHeaders() });
    assert(canceled.status === 200 && canceled.body.status === 'canceled' && !canceled.body.continue_url, 'cancel');
    const again = await call(`${path}/cancel`, { method: 'POST', headers: ucpHeaders() });
    assert(again.status === 409 && again.body.code === 'checkout_not_modifiable', `second cancel ${again.status}`);
  });
  check('U-I1', 'ucp', async () => {
    const headers = ucpHeaders();
    const first = await call('/ucp/checkout-sessions', {
      method: 'POST',
      headers,
      body: '{"line_items":[{"item":{"id":"variant_01tongue2pack"},"quantity":2}]}',
    });
    const replay = await call('/ucp/checkout-sessions', {
      method: 'POST',
      headers: { ...headers, 'Request-Id': randomUUID() },
      body: '{"line_items":[{"quantity":2.0,"item":{"id":"variant_01tongue2pack"}}]}',
    });
    assert(
      replay.text === first.text && replay.headers.get('idempotent-replayed') === 'true',
      'not a byte-identical replay',
    );
    const conflict = await call('/ucp/checkout-sessions', {
      method: 'POST',
      headers: { ...headers, 'Request-Id': randomUUID() },
      body: JSON.stringify(lines(3)),
    });
    assert(conflict.status === 409 && conflict.body.code === 'idempotency_conflict', `${conflict.status}`);
  });
  check('U-M1/U-M2', 'ucp', async () => {
    const rpc = (method: string, params?: unknown) =>
      call('/ucp/mcp', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
    const list = await rpc('tools/list');
    assert(list.body.result.tools.length === 5, 'five tools');
    const created = await rpc('tools/call', {
      name: 'create_checkout',
      arguments: { meta: { 'ucp-agent': { profile } }, checkout: lines() },
    });
    const content = created.body.result.structuredContent;
    const problems = protocolBodyProblems('/ucp/checkout-sessions', 201, content);
    result.schemaErrors += problems.length;
    assert(problems.length === 0, `structuredContent: ${problems[0]?.message}`);
    const rest = await call(`/ucp/checkout-sessions/${content.id}`, { headers: ucpHeaders() });
    assert(JSON.stringify(rest.body) === JSON.stringify(content), 'MCP and REST differ');
  });
  check('U-N5', 'ucp', async () => {
    if (!options.lenient || !profileBase) throw new Skipped('the store is not in the lenient policy');
    const { status, body } = await ucpCreate(lines(), ucpHeaders(`${profileBase}/missing.json`));
    assert(status === 201, `${status}`);
    assert(
      body.messages.some((message: Json) => message.type === 'info' && message.code === 'profile_not_negotiated'),
      'no profile_not_negotiated info',
    );
  });
  check('U-C5', 'ucp', async () => {
    const codes = ['NOPE99', 'spring20', 'LAUNCH50', 'NEWYEAR27', '10OFF', '10off', 'WELCOME5'];
    const warnings = (checkout: Json) =>
      JSON.stringify(
        checkout.messages
          .filter((message: Json) => message.type === 'warning')
          .map((message: Json) => [message.path, message.code]),
      );
    const all = await ucpCreate({ ...lines(), discounts: { codes } });
    const expected = [
      ['$.discounts.codes[0]', 'discount_code_invalid'],
      ['$.discounts.codes[1]', 'discount_code_expired'],
      ['$.discounts.codes[2]', 'discount_code_usage_limit_reached'],
      ['$.discounts.codes[3]', 'discount_code_invalid'],
      ['$.discounts.codes[5]', 'discount_code_already_applied'],
      ['$.discounts.codes[6]', 'discount_code_combination_disallowed'],
    ];
    assert(warnings(all.body) === JSON.stringify(expected), `warnings ${warnings(all.body)}`);
    const small = await ucpCreate({ ...lines(1), discounts: { codes: ['WELCOME5'] } });
    assert(
      warnings(small.body) === JSON.stringify([['$.discounts.codes[0]', 'discount_code_minimum_not_met']]),
      `below the minimum: ${warnings(small.body)}`,
    );
    const yen = await ucpCreate({ ...lines(), context: { address_country: 'JP' }, discounts: { codes: ['WELCOME5'] } });
    assert(
      warnings(yen.body) === JSON.stringify([['$.discounts.codes[0]', 'discount_code_user_ineligible']]),
      `other currency: ${warnings(yen.body)}`,
    );
  });
  check('U-C6', 'ucp', async () => {
    const { body } = await ucpCreate(lines());
    assert(body.status === 'requires_escalation', `status ${body.status}`);
    assert(URL.canParse(body.continue_url) && body.continue_url.includes(body.id), `continue_url ${body.continue_url}`);
    const [first] = body.messages;
    assert(
      first?.type === 'error' && first.code === 'payment_handoff_required' && first.severity === 'requires_buyer_input',
      `first message ${JSON.stringify(first)}`,
    );
  });
  check('U-C9', 'ucp', async () => {
    const { status, body } = await ucpCreate({
      id: 'chk_mine',
      status: 'completed',
      currency: 'EUR',
      ucp: { version: '2020-01-01' },
      totals: [{ type: 'total', amount: 1 }],
      line_items: [{ id: 'li_mine', item: { id: TWO_PACK, price: 1 }, quantity: 2, totals: [] }],
    });
    assert(
      status === 201 && body.id !== 'chk_mine' && body.currency === 'USD',
      `${status} ${body.id} ${body.currency}`,
    );
    assert(body.line_items[0].item.price === 1299, `price ${body.line_items[0].item.price}`);
  });
  check('U-U2/U-U3', 'ucp', async () => {
    const created = await ucpCreate(lines());
    const path = `/ucp/checkout-sessions/${created.body.id}`;
    const rejected = await call(path, {
      method: 'PUT',
      headers: ucpHeaders(),
      body: JSON.stringify({ line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }] }),
    });
    assert(rejected.status === 200, `${rejected.status}`);
    assert(
      JSON.stringify(rejected.body.line_items) === JSON.stringify(created.body.line_items) &&
        JSON.stringify(rejected.body.totals) === JSON.stringify(created.body.totals),
      'the checkout changed',
    );
    assert(
      rejected.body.messages.some(
        (message: Json) =>
          message.code === 'not_found' &&
          message.severity === 'recoverable' &&
          message.path === '$.line_items[0].item.id',
      ),
      'no recoverable not_found',
    );
    await call(`${path}/cancel`, { method: 'POST', headers: ucpHeaders() });
    const put = await call(path, { method: 'PUT', headers: ucpHeaders(), body: JSON.stringify(lines()) });
    const complete = await call(`${path}/complete`, {
      method: 'POST',
      headers: ucpHeaders(),
      body: JSON.stringify({ payment: {} }),
    });
    for (const [what, answer] of [
      ['PUT', put],
      ['complete', complete],
    ] as const)
      assert(answer.status === 409 && answer.body.code === 'checkout_not_modifiable', `${what} ${answer.status}`);
  });
  check('U-I2', 'ucp', async () => {
    const headers = ucpHeaders();
    const body = JSON.stringify(lines());
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        call('/ucp/checkout-sessions', {
          method: 'POST',
          headers: { ...headers, 'Request-Id': randomUUID() },
          body,
        }),
      ),
    );
    const created = answers.filter((answer) => answer.status === 201);
    const inFlight = answers.filter((answer) => answer.status === 503);
    assert(created.length + inFlight.length === answers.length, `statuses ${answers.map((a) => a.status)}`);
    assert(new Set(created.map((answer) => answer.body.id)).size === 1, 'more than one checkout created');
    assert(
      inFlight.every((answer) => answer.body.code === 'idempotency_in_flight' && answer.headers.get('retry-after')),
      'in flight without idempotency_in_flight + Retry-After',
    );
    const retry = await call('/ucp/checkout-sessions', {
      method: 'POST',
      headers: { ...headers, 'Request-Id': randomUUID() },
      body,
    });
    assert(retry.status === 201 && retry.body.id === created[0]!.body.id, 'the retry is not the same checkout');
  });
  check('U-M3', 'ucp', async () => {
    if (!profileBase) throw new Skipped('external profile');
    const rpc = (id: number, name: string, args: unknown) =>
      call('/ucp/mcp', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
      });
    const unreachable = await rpc(1, 'create_checkout', {
      meta: { 'ucp-agent': { profile: `${profileBase}/missing.json` } },
      checkout: lines(),
    });
    if (!options.lenient)
      assert(
        unreachable.status === 424 && unreachable.body.error?.code === -32001,
        `negotiation: ${unreachable.status} ${unreachable.body.error?.code}`,
      );
    const key = randomUUID();
    const meta = { 'ucp-agent': { profile }, 'idempotency-key': key };
    const first = await rpc(2, 'create_checkout', { meta, checkout: lines() });
    const again = await rpc(3, 'create_checkout', { meta, checkout: lines() });
    assert(
      JSON.stringify(again.body.result?.structuredContent) === JSON.stringify(first.body.result?.structuredContent),
      'another JSON-RPC id did not replay',
    );
    const conflict = await rpc(4, 'create_checkout', { meta, checkout: lines(3) });
    assert(
      conflict.status === 409 && conflict.body.error?.code === -32000,
      `conflict: ${conflict.status} ${conflict.body.error?.code}`,
    );
  });
  check('U-R1', 'ucp', async () => {
    const { headers } = await ucpCreate(lines());
    assert(
      headers.get('cache-control') === 'no-store' && (headers.get('content-type') ?? '').startsWith('application/json'),
      'headers',
    );
  });

  check('U-C2', 'ucp', async () => {
    assert(ucpCheckouts.length > 0, 'no checkout received');
    const problems = ucpCheckouts.flatMap((checkout) =>
      ucpTotalsProblems(checkout).map((problem) => `${checkout.id}: ${problem}`),
    );
    assert(problems.length === 0, `${problems.length} broken: ${problems[0]}`);
  });

  // ACP: a client of the store's own OAuth with cart:write.
  let token: string | undefined;
  const acpHeaders = (extra: Record<string, string> = {}) => ({
    Authorization: `Bearer ${token}`,
    'API-Version': ACP_VERSION,
    'Idempotency-Key': randomUUID(),
    'Content-Type': 'application/json',
    ...extra,
  });
  const acpCreate = (body: unknown, extra: Record<string, string> = {}) =>
    call('/acp/checkout_sessions', { method: 'POST', headers: acpHeaders(extra), body: JSON.stringify(body) });
  const BASIC = { line_items: [{ id: TWO_PACK, quantity: 2 }], currency: 'usd', capabilities: {} };

  check('A-D1', 'acp', async () => {
    const { status, headers, body } = await call('/.well-known/acp.json');
    assert(status === 200 && body.protocol.version === ACP_VERSION, `${status}`);
    assert(headers.get('cache-control') === 'public, max-age=3600', 'Cache-Control');
    const discovery = await call('/.well-known/acp.json');
    assert(discovery.body.api_base_url.endsWith('/acp'), 'api_base_url');
  });
  check('A-H1', 'acp', async () => {
    const { status, headers } = await call('/acp/checkout_sessions', {
      method: 'POST',
      headers: { 'API-Version': ACP_VERSION, 'Idempotency-Key': randomUUID(), 'Content-Type': 'application/json' },
      body: JSON.stringify(BASIC),
    });
    assert(status === 401 && headers.get('www-authenticate'), `${status}`);
  });
  check('A-H2', 'acp', async () => {
    const { status, body } = await acpCreate(BASIC, { 'API-Version': '2026-01-30' });
    assert(
      status === 400 && body.code === 'unsupported_api_version' && body.supported_versions?.[0] === ACP_VERSION,
      `${status}`,
    );
  });
  check('A-H3', 'acp', async () => {
    const { status, body } = await acpCreate(BASIC, { 'Idempotency-Key': '' });
    assert(status === 400 && body.code === 'idempotency_key_required', `${status}`);
  });
  check('A-C1/A-C2', 'acp', async () => {
    const first = await acpCreate({ ...BASIC, discounts: { codes: ['10OFF'] } });
    assert(first.status === 201 && first.body.status === 'requires_escalation', `${first.status}`);
    const expected = [
      ['items_base_amount', 2598],
      ['items_discount', 260],
      ['subtotal', 2338],
      ['fulfillment', 495],
      ['tax', 170],
      ['total', 3003],
    ];
    assert(
      JSON.stringify(totalsOf(first.body.totals)) === JSON.stringify(expected),
      `totals ${JSON.stringify(totalsOf(first.body.totals))}`,
    );
    const second = await acpCreate({
      line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
      currency: 'usd',
      capabilities: {},
      discounts: { codes: ['10OFF'] },
    });
    assert(
      JSON.stringify(totalsOf(second.body.totals)) === JSON.stringify(expected),
      'the item form prices differently',
    );
  });
  check('A-C4', 'acp', async () => {
    const chf = await acpCreate({ ...BASIC, currency: 'chf' });
    assert(
      chf.status === 400 && chf.body.code === 'unsupported_currency' && chf.body.param === '$.currency',
      `${chf.status}`,
    );
  });
  check('A-C5', 'acp', async () => {
    const { body } = await acpCreate({ ...BASIC, discounts: { codes: ['NOPE99'] } });
    assert(body.discounts.rejected[0]?.reason === 'discount_code_invalid', 'rejected');
  });
  check('A-C7/A-C8', 'acp', async () => {
    const unknown = await acpCreate({ ...BASIC, line_items: [{ id: 'variant_nope', quantity: 1 }] });
    assert(unknown.status === 400 && unknown.body.code === 'item_not_found', `${unknown.status}`);
    const legacy = await acpCreate({ items: BASIC.line_items, currency: 'usd', capabilities: {} });
    assert(legacy.status === 400 && legacy.body.code === 'unknown_field', `${legacy.status} ${legacy.body.code}`);
  });
  check('A-G1/A-U1', 'acp', async () => {
    const missing = await call('/acp/checkout_sessions/cart_nope', { headers: acpHeaders() });
    assert(missing.status === 404 && missing.body.code === 'session_not_found', `${missing.status}`);
    const created = await acpCreate(BASIC);
    const path = `/acp/checkout_sessions/${created.body.id}`;
    const updated = await call(path, {
      method: 'POST',
      headers: acpHeaders(),
      body: JSON.stringify({ line_items: [{ id: TWO_PACK, quantity: 3 }] }),
    });
    assert(
      updated.status === 200 &&
        updated.body.line_items[0].id === created.body.line_items[0].id &&
        updated.body.line_items[0].quantity === 3,
      'update',
    );
  });
  check('A-P1/A-X1', 'acp', async () => {
    const created = await acpCreate(BASIC);
    const path = `/acp/checkout_sessions/${created.body.id}`;
    const complete = await call(`${path}/complete`, {
      method: 'POST',
      headers: acpHeaders(),
      body: JSON.stringify({ payment_data: { purchase_order_number: 'PO-1' } }),
    });
    assert(complete.status === 422 && complete.body.code === 'delegated_payment_not_supported', `${complete.status}`);
    const canceled = await call(`${path}/cancel`, { method: 'POST', headers: acpHeaders(), body: '{}' });
    assert(canceled.status === 200 && canceled.body.status === 'canceled', `${canceled.status}`);
    const again = await call(`${path}/cancel`, { method: 'POST', headers: acpHeaders(), body: '{}' });
    assert(again.status === 405 && again.body.code === 'session_already_canceled', `${again.status}`);
  });
  check('A-I1/A-I2', 'acp', async () => {
    const key = randomUUID();
    const first = await call('/acp/checkout_sessions', {
      method: 'POST',
      headers: acpHeaders({ 'Idempotency-Key': key }),
      body: '{"line_items":[{"id":"variant_01tongue2pack","quantity":2}],"currency":"usd","capabilities":{}}',
    });
    const replay = await call('/acp/checkout_sessions', {
      method: 'POST',
      headers: acpHeaders({ 'Idempotency-Key': key }),
      body: '{"capabilities":{},"currency":"usd","line_items":[{"quantity":2.0,"id":"variant_01tongue2pack"}]}',
    });
    assert(
      replay.text === first.text && replay.headers.get('idempotent-replayed') === 'true',
      'not a byte-identical replay',
    );
    const conflict = await acpCreate({ ...BASIC, currency: 'eur' }, { 'Idempotency-Key': key });
    assert(conflict.status === 422 && conflict.body.code === 'idempotency_conflict', `${conflict.status}`);
  });

  check('A-H4/A-R2', 'acp', async () => {
    const created = await acpCreate(BASIC, { 'Idempotency-Key': 'conformance-echo', 'Request-Id': 'conformance-1' });
    const headers = created.headers;
    assert(headers.get('idempotency-key') === 'conformance-echo', `Idempotency-Key ${headers.get('idempotency-key')}`);
    assert(headers.get('request-id') === 'conformance-1', `Request-Id ${headers.get('request-id')}`);
    assert(headers.get('api-version') === ACP_VERSION, `API-Version ${headers.get('api-version')}`);
    const path = `/acp/checkout_sessions/${created.body.id}`;
    const updated = await call(path, {
      method: 'POST',
      headers: acpHeaders(),
      body: JSON.stringify({ line_items: [{ id: TWO_PACK, quantity: 3 }] }),
    });
    const read = await call(path, { headers: acpHeaders() });
    assert(read.text === updated.text, 'GET after update is not the updated session');
    for (const answer of [created, updated, read]) {
      assert(
        answer.headers.get('cache-control') === 'no-store',
        `Cache-Control ${answer.headers.get('cache-control')}`,
      );
      assert((answer.headers.get('content-type') ?? '').startsWith('application/json'), 'Content-Type');
    }
  });
  check('A-C5 (D7)', 'acp', async () => {
    const reasons = async (body: unknown) =>
      JSON.stringify(((await acpCreate(body)).body.discounts.rejected as Json[]).map((rejected) => rejected.reason));
    const all = await reasons({
      ...BASIC,
      discounts: { codes: ['NOPE99', 'spring20', 'LAUNCH50', 'NEWYEAR27', '10OFF', '10off', 'WELCOME5'] },
    });
    const expected = [
      'discount_code_invalid',
      'discount_code_expired',
      'discount_code_usage_limit_reached',
      'discount_code_invalid',
      'discount_code_already_applied',
      'discount_code_combination_disallowed',
    ];
    assert(all === JSON.stringify(expected), `reasons ${all}`);
    const small = await reasons({
      ...BASIC,
      line_items: [{ id: TWO_PACK, quantity: 1 }],
      discounts: { codes: ['WELCOME5'] },
    });
    assert(small === '["discount_code_minimum_not_met"]', `below the minimum: ${small}`);
    const yen = await reasons({ ...BASIC, currency: 'jpy', discounts: { codes: ['WELCOME5'] } });
    assert(yen === '["discount_code_user_ineligible"]', `other currency: ${yen}`);
  });
  check('A-C6', 'acp', async () => {
    const { body } = await acpCreate(BASIC);
    assert(URL.canParse(body.continue_url) && body.continue_url.includes(body.id), `continue_url ${body.continue_url}`);
    const [first] = body.messages;
    assert(
      first?.type === 'info' && first.resolution === 'requires_buyer_input' && first.param === '$.continue_url',
      `first message ${JSON.stringify(first)}`,
    );
    assert(body.capabilities?.payment?.handlers?.[0]?.requires_delegate_payment === false, 'handler');
  });
  check('A-U2/A-U3', 'acp', async () => {
    const created = await acpCreate(BASIC);
    const path = `/acp/checkout_sessions/${created.body.id}`;
    const update = (body: unknown) => call(path, { method: 'POST', headers: acpHeaders(), body: JSON.stringify(body) });
    const unknown = await update({ line_items: [{ id: 'variant_nope', quantity: 1 }] });
    const express = await update({
      selected_fulfillment_options: [
        { type: 'shipping', option_id: 'express', item_ids: [created.body.line_items[0].id] },
      ],
    });
    for (const [answer, code, param] of [
      [unknown, 'not_found', '$.line_items[0].id'],
      [express, 'invalid', '$.selected_fulfillment_options[0]'],
    ] as const) {
      assert(answer.status === 200, `${code}: ${answer.status}`);
      assert(
        JSON.stringify(answer.body.totals) === JSON.stringify(created.body.totals),
        `${code}: the session changed`,
      );
      assert(
        answer.body.messages.some(
          (message: Json) =>
            message.type === 'error' &&
            message.code === code &&
            message.param === param &&
            message.resolution === 'recoverable',
        ),
        `no recoverable ${code} at ${param}`,
      );
    }
  });
  check('A-P2', 'acp', async () => {
    const created = await acpCreate(BASIC);
    const path = `/acp/checkout_sessions/${created.body.id}`;
    const without = await call(`${path}/complete`, { method: 'POST', headers: acpHeaders(), body: '{}' });
    assert(without.status === 400, `complete without payment_data: ${without.status}`);
    await call(`${path}/cancel`, { method: 'POST', headers: acpHeaders(), body: '{}' });
    const canceled = await call(`${path}/complete`, {
      method: 'POST',
      headers: acpHeaders(),
      body: JSON.stringify({ payment_data: { purchase_order_number: 'PO-1' } }),
    });
    assert(canceled.status === 405 && canceled.body.code === 'session_canceled', `on canceled: ${canceled.status}`);
  });
  check('A-I2 (in flight)/A-I3', 'acp', async () => {
    const key = randomUUID();
    const body = JSON.stringify(BASIC);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        call('/acp/checkout_sessions', { method: 'POST', headers: acpHeaders({ 'Idempotency-Key': key }), body }),
      ),
    );
    const created = answers.filter((answer) => answer.status === 201);
    const inFlight = answers.filter((answer) => answer.status === 409);
    assert(created.length + inFlight.length === answers.length, `statuses ${answers.map((a) => a.status)}`);
    assert(new Set(created.map((answer) => answer.body.id)).size === 1, 'more than one session created');
    assert(
      inFlight.every((answer) => answer.body.code === 'idempotency_in_flight' && answer.headers.get('retry-after')),
      'in flight without idempotency_in_flight + Retry-After',
    );
    const withNull = await acpCreate({ ...BASIC, buyer: null }, { 'Idempotency-Key': key });
    assert(
      withNull.status === 422 && withNull.body.code === 'idempotency_conflict',
      `null vs absent: ${withNull.status}`,
    );
  });
  check('A-C3', 'acp', async () => {
    assert(acpSessions.length > 0, 'no session received');
    const problems = acpSessions.flatMap((session) =>
      acpTotalsProblems(session).map((problem) => `${session.id}: ${problem}`),
    );
    assert(problems.length === 0, `${problems.length} broken: ${problems[0]}`);
  });
  // Last: it spends the rest of this client's rate limit.
  check('A-R1', 'acp', async () => {
    const probe = await call('/.well-known/acp.json');
    const remaining = Number(probe.headers.get('ratelimit-remaining'));
    if (!probe.headers.has('ratelimit-remaining') || remaining > 5_000)
      throw new Skipped(`a limit of ${probe.headers.get('ratelimit-limit') ?? 'unknown'} is too high to reach`);
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let sent = 0; !limited && sent <= remaining + 50; sent += 50) {
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => call('/acp/checkout_sessions/cart_nope', { headers: acpHeaders() })),
      );
      limited = answers.find((answer) => answer.status === 429);
    }
    assert(limited, 'no 429');
    assert(
      limited.body.type === 'service_unavailable' && limited.body.code === 'rate_limit_exceeded',
      `429 body ${limited.text}`,
    );
    assert(Number(limited.headers.get('retry-after')) > 0, 'no Retry-After');
  });

  try {
    for (const [id, protocol, run] of checks) {
      if (options.protocol && options.protocol !== protocol) continue;
      if (protocol === 'acp' && token === undefined) token = await acpToken(base);
      try {
        await run();
        result.pass += 1;
        log(`PASS ${id}`);
      } catch (error) {
        if (error instanceof Skipped) {
          result.skip += 1;
          log(`SKIP ${id}: ${error.message}`);
          continue;
        }
        result.fail += 1;
        const message = `${id}: ${error instanceof Error ? error.message : String(error)}`;
        result.failures.push(message);
        log(`FAIL ${message}`);
      }
    }
  } finally {
    await new Promise<void>((resolve) => (profileServer ? profileServer.close(() => resolve()) : resolve()));
  }
  log(
    `${result.pass} pass / ${result.fail} fail / ${result.skip} skip; ${result.responses} responses, ${result.schemaErrors} schema errors`,
  );
  return result;
}

/** Registers a client with the store's own OAuth and gets a cart:write token (client_credentials). */
export async function acpToken(base: string): Promise<string> {
  const registration = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'acp-conformance', grant_types: ['client_credentials'], scope: 'cart:write' }),
  });
  const client = (await registration.json()) as { client_id: string; client_secret: string };
  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.client_id,
      client_secret: client.client_secret,
      scope: 'cart:write',
    }).toString(),
  });
  return ((await token.json()) as { access_token: string }).access_token;
}
