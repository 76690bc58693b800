// Event-loop stalls (issue #29, finding 2): the worst bodies and the worst platform profile the service's limits allow,
// each sent to the running service while a probe keeps one `GET /healthz` outstanding at a time; a stall is the longest
// wait of a probe while the request was served (the service answers /healthz at once unless its only thread is busy).
// Each body is as large as the body limit allows and is made of what once cost the validators more than quadratic time:
// an array of empty objects, each failing its item schema. The first send of each compiles its validator (once per
// process); the figure judged is the worst of the sends after it. Target: under STALL_TARGET_MS.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { BODY_LIMIT_BYTES, MAX_CONTAINERS } from '../src/http/body.js';
import { MAX_PROFILE_BYTES } from '../src/services/ucp-profiles.js';
import { platformProfile } from '../src/conformance/profile.js';
import { cpuMs } from './processes.js';
import { agentToken } from './rows.js';

export const STALL_TARGET_MS = 50;

export interface StallRow {
  title: string;
  /** The size of the abusive part: the request body, or the profile the service fetched. */
  bytes: number;
  /** The answer's status and code (the service's refusal, or its error). */
  answer: string;
  /** The longest probe wait during the first send (which compiles the validator). */
  firstMs: number;
  /** The longest probe wait over the later sends: the figure judged. */
  worstMs: number;
  /** The service's CPU time per send, over as many more sends without the probe (10 ms clock ticks, averaged). */
  cpuMsPerSend: number;
  meetsTarget: boolean;
}

interface Abuse {
  title: string;
  /** A fresh request each time (new keys, new profile URL). */
  request(): { url: string; init: RequestInit; bytes: number };
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const ACP_VERSION = '2026-04-17';
const UCP_VERSION = '2026-04-08';
const MCP_HEADERS = {
  ...JSON_HEADERS,
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2025-06-18',
};
const ITEM = 'variant_01tongue2pack';

/** `prefix` + `[{},{},…]` + `suffix`, with as many empty objects as keep the text within `limit` bytes. */
function emptyObjects(prefix: string, suffix: string, limit: number): string {
  const count = Math.floor((limit - prefix.length - suffix.length - 2) / 3);
  return `${prefix}[${Array.from({ length: count }, () => '{}').join(',')}]${suffix}`;
}

/**
 * The body the body reader still lets through (src/http/body.ts MAX_CONTAINERS): as many empty objects as the bound
 * leaves once the objects and arrays of `prefix` and the array itself are counted. Beyond it the reader refuses the body
 * before validation, so this is the most a schema, the key's hash and the store ever see.
 */
function emptyObjectsAtBound(prefix: string, suffix: string): string {
  const opened = [...prefix].filter((character) => character === '{' || character === '[').length;
  return emptyObjects(prefix, suffix, (MAX_CONTAINERS - opened - 1) * 3 + prefix.length + suffix.length + 2);
}

/** A platform profile of `limit` bytes whose `where` is an array of empty objects. */
function abusiveProfile(where: 'capability' | 'service' | 'payment_handler', limit: number): string {
  const prefix = {
    capability: `{"ucp":{"version":"${UCP_VERSION}","capabilities":{"dev.ucp.shopping.checkout":`,
    service: `{"ucp":{"version":"${UCP_VERSION}","services":{"dev.ucp.shopping":`,
    payment_handler: `{"ucp":{"version":"${UCP_VERSION}","payment_handlers":{"com.example.pay":`,
  }[where];
  return emptyObjects(prefix, '}}}', limit);
}

/** Serves the good profile at /good.json and each abusive one at /<where>.json, whatever the query string. */
async function startProfileServer(limit: number): Promise<{ url: (path: string) => string; server: Server }> {
  const bodies: Record<string, string> = {
    '/good.json': JSON.stringify(platformProfile()),
    '/capability.json': abusiveProfile('capability', limit),
    '/service.json': abusiveProfile('service', limit),
    '/payment_handler.json': abusiveProfile('payment_handler', limit),
  };
  const server = createServer((request, response) => {
    const body = bodies[(request.url ?? '').split('?')[0]!];
    response.writeHead(body ? 200 : 404, JSON_HEADERS);
    response.end(body ?? '{}');
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: (path) => `http://127.0.0.1:${port}${path}`, server };
}

/** The longest wait of a probe kept outstanding (one at a time) until `served` settles. */
async function longestProbeWait(baseUrl: string, served: Promise<unknown>): Promise<number> {
  let done = false;
  void served.finally(() => (done = true)).catch(() => undefined);
  let longest = 0;
  while (!done) {
    const started = performance.now();
    await (await fetch(`${baseUrl}/healthz`)).arrayBuffer();
    longest = Math.max(longest, performance.now() - started);
  }
  return longest;
}

async function send(baseUrl: string, abuse: Abuse): Promise<{ waitMs: number; answer: string; bytes: number }> {
  const { url, init, bytes } = abuse.request();
  const served = fetch(`${baseUrl}${url}`, init).then(async (response) => {
    const text = await response.text();
    let code: string;
    try {
      const body = JSON.parse(text) as Record<string, any>;
      code = body.code ?? body.error?.data?.code ?? body.error?.code ?? body.messages?.[0]?.code ?? '';
    } catch {
      code = 'not JSON';
    }
    return `${response.status}${code ? ` ${code}` : ''}`;
  });
  const waitMs = await longestProbeWait(baseUrl, served);
  return { waitMs, answer: await served, bytes };
}

async function created(baseUrl: string, url: string, headers: Record<string, string>, body: unknown): Promise<string> {
  const response = await fetch(`${baseUrl}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url} answered ${response.status}: ${text.slice(0, 200)}`);
  return (JSON.parse(text) as { id: string }).id;
}

function abuses(baseUrl: string, token: string, profile: (path: string) => string, ids: { acp: string; ucp: string }) {
  const protocolLimit = BODY_LIMIT_BYTES;
  const contractLimit = BODY_LIMIT_BYTES;
  const acp = () => ({
    ...JSON_HEADERS,
    authorization: `Bearer ${token}`,
    'api-version': ACP_VERSION,
    'idempotency-key': randomUUID(),
  });
  const ucp = (profileUrl = profile('/good.json')) => ({
    ...JSON_HEADERS,
    'ucp-agent': `profile="${profileUrl}"`,
    'request-id': randomUUID(),
    'idempotency-key': randomUUID(),
  });
  const post =
    (url: string, headers: () => Record<string, string>, body: string, method = 'POST') =>
    () => ({
      url,
      init: { method, headers: headers(), body },
      bytes: Buffer.byteLength(body),
    });
  const ucpMeta = () =>
    JSON.stringify({ 'ucp-agent': { profile: profile('/good.json') }, 'idempotency-key': randomUUID() });
  const list: Abuse[] = [
    {
      // The floor: what a probe waits for a request of no size on this machine now (other load shows here).
      title: 'Baseline: an ACP update of one empty object (a fulfillment group)',
      request: post(`/acp/checkout_sessions/${ids.acp}`, acp, '{"fulfillment_groups":[{}]}'),
    },
    {
      title: 'ACP create: line_items of empty objects',
      request: post('/acp/checkout_sessions', acp, emptyObjects('{"line_items":', '}', protocolLimit)),
    },
    {
      title: 'ACP create: fulfillment_groups of empty objects',
      request: post(
        '/acp/checkout_sessions',
        acp,
        emptyObjects(
          `{"line_items":[{"id":"${ITEM}"}],"currency":"usd","capabilities":{},"fulfillment_groups":`,
          '}',
          protocolLimit,
        ),
      ),
    },
    {
      title: 'ACP update: fulfillment_groups of empty objects',
      request: post(
        `/acp/checkout_sessions/${ids.acp}`,
        acp,
        emptyObjects('{"fulfillment_groups":', '}', protocolLimit),
      ),
    },
    {
      title: 'ACP complete: marketing_consents of empty objects',
      request: post(
        `/acp/checkout_sessions/${ids.acp}/complete`,
        acp,
        emptyObjects('{"marketing_consents":', '}', protocolLimit),
      ),
    },
    {
      title: 'UCP create: line_items of empty objects',
      request: post('/ucp/checkout-sessions', ucp, emptyObjects('{"line_items":', '}', protocolLimit)),
    },
    {
      title: 'UCP update: line_items of empty objects',
      request: post(
        `/ucp/checkout-sessions/${ids.ucp}`,
        ucp,
        emptyObjects('{"line_items":', '}', protocolLimit),
        'PUT',
      ),
    },
    {
      title: 'UCP create: an ignored field of empty objects',
      request: post(
        '/ucp/checkout-sessions',
        ucp,
        emptyObjects(`{"line_items":[{"item":{"id":"${ITEM}"},"quantity":1}],"ignored":`, '}', protocolLimit),
      ),
    },
    {
      title: 'UCP MCP create_checkout: line_items of empty objects',
      request: () => {
        const body = emptyObjects(
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_checkout","arguments":{"meta":${ucpMeta()},"checkout":{"line_items":`,
          '}}}}',
          protocolLimit,
        );
        return {
          url: '/ucp/mcp',
          init: { method: 'POST', headers: MCP_HEADERS, body },
          bytes: Buffer.byteLength(body),
        };
      },
    },
    {
      title: 'Checkout MCP create_checkout_session: items of empty objects',
      request: post(
        '/checkout/mcp',
        () => MCP_HEADERS,
        emptyObjects(
          '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_checkout_session","arguments":{"items":',
          '}}}',
          protocolLimit,
        ),
      ),
    },
    {
      title: 'Contract create (POST /checkout_sessions): items of empty objects',
      request: post(
        '/checkout_sessions',
        () => ({ ...JSON_HEADERS, 'idempotency-key': randomUUID() }),
        emptyObjects('{"items":', '}', contractLimit),
      ),
    },
    {
      title: `ACP update: fulfillment_groups of empty objects, at the body's bound (${MAX_CONTAINERS} objects and arrays)`,
      request: post(`/acp/checkout_sessions/${ids.acp}`, acp, emptyObjectsAtBound('{"fulfillment_groups":', '}')),
    },
    {
      title: `UCP create: an ignored field of empty objects, at the body's bound (${MAX_CONTAINERS} objects and arrays)`,
      request: post(
        '/ucp/checkout-sessions',
        ucp,
        emptyObjectsAtBound(`{"line_items":[{"item":{"id":"${ITEM}"},"quantity":1}],"ignored":`, '}'),
      ),
    },
    {
      title: `Contract create: items of empty objects, at the body's bound (${MAX_CONTAINERS} objects and arrays)`,
      request: post(
        '/checkout_sessions',
        () => ({ ...JSON_HEADERS, 'idempotency-key': randomUUID() }),
        emptyObjectsAtBound('{"items":', '}'),
      ),
    },
    ...(['capability', 'service', 'payment_handler'] as const).map((where): Abuse => ({
      title: `UCP platform profile (${MAX_PROFILE_BYTES / 1024} KiB): a ${where.replace('_', ' ')} array of empty objects`,
      request: () => {
        // A new URL each time: the profile is fetched (and checked) again, not answered from the cache.
        const profileUrl = `${profile(`/${where}.json`)}?${randomUUID()}`;
        const body = `{"line_items":[{"item":{"id":"${ITEM}"},"quantity":1}]}`;
        return {
          url: '/ucp/checkout-sessions',
          init: { method: 'POST', headers: ucp(profileUrl), body },
          bytes: Buffer.byteLength(abusiveProfile(where, MAX_PROFILE_BYTES)),
        };
      },
    })),
  ];
  return list;
}

/**
 * Sends each abusive request `1 + repeats` times to the service at `baseUrl` (with the protocol bindings on, and
 * UCP_INSECURE_PROFILE_HOSTS naming 127.0.0.1), one at a time, and reports the longest probe waits.
 */
export async function measureStalls(
  baseUrl: string,
  servicePid: number,
  options: { repeats: number; only: string | undefined },
): Promise<StallRow[]> {
  const profiles = await startProfileServer(MAX_PROFILE_BYTES);
  try {
    const token = await agentToken(baseUrl, 'cart:write');
    const ids = {
      acp: await created(
        baseUrl,
        '/acp/checkout_sessions',
        {
          ...JSON_HEADERS,
          authorization: `Bearer ${token}`,
          'api-version': ACP_VERSION,
          'idempotency-key': randomUUID(),
        },
        { line_items: [{ id: ITEM, quantity: 1 }], currency: 'usd', capabilities: {} },
      ),
      ucp: await created(
        baseUrl,
        '/ucp/checkout-sessions',
        {
          ...JSON_HEADERS,
          'ucp-agent': `profile="${profiles.url('/good.json')}"`,
          'request-id': randomUUID(),
          'idempotency-key': randomUUID(),
        },
        { line_items: [{ item: { id: ITEM }, quantity: 1 }] },
      ),
    };
    const rows: StallRow[] = [];
    for (const abuse of abuses(baseUrl, token, profiles.url, ids)) {
      if (options.only && !abuse.title.includes(options.only)) continue;
      const first = await send(baseUrl, abuse);
      let worstMs = 0;
      for (let repeat = 0; repeat < options.repeats; repeat++)
        worstMs = Math.max(worstMs, (await send(baseUrl, abuse)).waitMs);
      const cpuBefore = cpuMs(servicePid);
      for (let repeat = 0; repeat < options.repeats; repeat++) {
        const { url, init } = abuse.request();
        await (await fetch(`${baseUrl}${url}`, init)).arrayBuffer();
      }
      const cpuMsPerSend = (cpuMs(servicePid) - cpuBefore) / options.repeats;
      rows.push({
        title: abuse.title,
        bytes: first.bytes,
        answer: first.answer,
        firstMs: first.waitMs,
        worstMs,
        cpuMsPerSend,
        meetsTarget: worstMs < STALL_TARGET_MS,
      });
    }
    return rows;
  } finally {
    profiles.server.close();
  }
}

export function formatStalls(rows: StallRow[]): string {
  if (rows.length === 0) return '';
  const lines = rows.map(
    (row) =>
      `  ${row.meetsTarget ? 'ok  ' : 'SLOW'} ${row.worstMs.toFixed(1).padStart(8)} ms  (first ${row.firstMs.toFixed(1).padStart(8)} ms; CPU ${row.cpuMsPerSend.toFixed(0).padStart(5)} ms/send)  ${(row.bytes / 1024).toFixed(0).padStart(4)} KiB  ${row.answer.padEnd(28)} ${row.title}`,
  );
  return [
    `Longest event-loop stall (a /healthz probe's wait) while serving the worst input the limits allow; target < ${STALL_TARGET_MS} ms. The first send compiles the validator; on a loaded machine the waits include time the service was not scheduled, the CPU time does not:`,
    ...lines,
  ].join('\n');
}
