// Session creates on the protocol bindings, POST /ucp/checkout-sessions (UCP REST) and POST /acp/checkout_sessions
// (ACP): what each request is answered, its status, every header with its value (no-store, RateLimit-*, the echoed
// Request-Id, ACP's API-Version and Idempotency-Key, Idempotent-Replayed, Retry-After, Connection: close), its body in
// the protocol's own shape (checked against the protocol's schemas too), and its one log line. The platform profile,
// authentication, version and key headers, the body, replays and conflicts, rate limit, a drain, PostgreSQL cut.
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import {
  drainingOnceCounted,
  expectAnswer,
  JSON_BODY,
  NOT_STORED,
  rateLimit,
  rateLimited,
  recordedService,
  whileDraining,
  whilePostgresCut,
  type Answer,
  type Init,
  type Request,
} from './support/answers.js';
import { serverUrl } from './support/database.js';
import { startServiceBehindProxy, type ServiceBehindProxy } from './support/outage.js';
import {
  PROTOCOL_ENV,
  protocolBodyProblems,
  startProfileServer,
  ucpHeaders,
  type ProfileServer,
} from './support/protocols.js';
import type { TestService } from './support/service.js';

const LIMIT = 4;
const UCP = '/ucp/checkout-sessions';
const ACP = '/acp/checkout_sessions';
const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
const UCP_SESSION = JSON.stringify({
  line_items: [
    { item: { id: TWO_PACK }, quantity: 2 },
    { item: { id: TRAVEL }, quantity: 1 },
  ],
  discounts: { codes: ['10OFF'] },
});
const ACP_SESSION = JSON.stringify({
  line_items: [
    { id: TWO_PACK, quantity: 2 },
    { id: TRAVEL, quantity: 1 },
  ],
  currency: 'usd',
  capabilities: {},
  discounts: { codes: ['10OFF'] },
});
const ACP_VERSION = '2026-04-17';
const UCP_VERSION = '2026-04-08';
const UCP_REQUEST_ID = randomUUID();
const CONTINUE_URL = 'https://shop.example.com/';
const RESOURCE_METADATA = 'resource_metadata="https://shop.example.com/.well-known/oauth-protected-resource"';

const api = recordedService({ limit: LIMIT, env: PROTOCOL_ENV });
const { requests } = api;
let profiles: ProfileServer;
let token: string;
let readOnlyToken: string;

beforeAll(async () => {
  profiles = await startProfileServer();
  token = await agentToken(api, 'cart:write');
  readOnlyToken = await agentToken(api, 'catalog:read');
});
afterAll(async () => {
  await profiles?.close();
});

/** Sends the request; its body must satisfy the protocol's own schemas (the contract's were checked as received). */
async function send(url: string, init: Request, address?: string, to: TestService = api): Promise<Answer> {
  const answer = await requests.send(to, url, init, address);
  const problems = protocolBodyProblems(new URL(url, api.url).pathname, answer.status, answer.body);
  expect(problems, answer.text.slice(0, 600)).toEqual([]);
  return answer;
}

function post(body: string | Uint8Array, headers: Record<string, string>): Init {
  return { method: 'POST', headers, body };
}

/** A UCP create from the platform whose profile is `profile` (the full one unless told), headers changed or removed. */
function ucp(
  body: string | Uint8Array = UCP_SESSION,
  extra: Record<string, string | undefined> = {},
  profile?: string,
) {
  const headers = { ...ucpHeaders(profiles.url(profile ?? '/full.json')), 'Request-Id': UCP_REQUEST_ID };
  return post(body, without(headers, extra));
}

/** An ACP create with a cart:write token and a new Idempotency-Key, headers replaced or removed. */
function acp(body: string | Uint8Array = ACP_SESSION, extra: Record<string, string | undefined> = {}) {
  const headers = {
    ...bearer(token),
    'API-Version': ACP_VERSION,
    'Content-Type': 'application/json',
    'Idempotency-Key': randomUUID(),
  };
  return post(body, without(headers, extra));
}

/** The headers, with `extra` set over them and its undefined ones taken out. */
function without(headers: Record<string, string>, extra: Record<string, string | undefined>): Record<string, string> {
  const merged: Record<string, string | undefined> = { ...headers, ...extra };
  return Object.fromEntries(
    Object.entries(merged).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

const json = (value: unknown) => JSON.stringify(value);
const chunked = (init: Init): Init =>
  ({ ...init, body: new Blob([init.body as string]).stream(), duplex: 'half' }) as Init;

/** A UCP answer's headers to a fresh address: not stored, and the Request-Id echoed once it was read. */
function ucpHeadersOf(extra: Record<string, unknown> = {}, echoed = true) {
  return {
    ...JSON_BODY,
    ...NOT_STORED,
    ...rateLimit(LIMIT, LIMIT - 1),
    ...(echoed ? { 'request-id': UCP_REQUEST_ID } : {}),
    ...extra,
  };
}

/** An ACP answer's headers to a fresh address: not stored, its API-Version, the key echoed once it was accepted. */
function acpHeadersOf(init: Init | undefined, extra: Record<string, unknown> = {}) {
  const key = init?.headers?.['Idempotency-Key'];
  return {
    ...JSON_BODY,
    ...NOT_STORED,
    ...rateLimit(LIMIT, LIMIT - 1),
    'api-version': ACP_VERSION,
    ...(key ? { 'idempotency-key': key } : {}),
    ...extra,
  };
}

/** UCP's error shape. */
const ucpError = (code: string, content: string, path?: string) => ({
  code,
  content,
  ...(path === undefined ? {} : { path }),
  continue_url: CONTINUE_URL,
});
/** ACP's error shape. */
const acpError = (code: string, message: string, param?: string, type = 'invalid_request') => ({
  type,
  code,
  message,
  ...(param === undefined ? {} : { param }),
});

/** A UCP total of the given type. */
const ucpTotal = (type: string, amount: number) => expect.objectContaining({ type, amount });

/** A new UCP session, both lines, handed over to the buyer to pay, with the totals given and the capabilities agreed. */
function ucpSession({ total, discount }: { total: number; discount: boolean }) {
  return expect.objectContaining({
    ucp: expect.objectContaining({
      version: UCP_VERSION,
      status: 'success',
      capabilities: {
        'dev.ucp.shopping.checkout': [{ version: UCP_VERSION }],
        ...(discount ? { 'dev.ucp.shopping.discount': [{ version: UCP_VERSION }] } : {}),
      },
    }),
    id: expect.stringMatching(/^cart_[\w-]{16}$/),
    status: 'requires_escalation',
    currency: 'USD',
    line_items: [
      expect.objectContaining({ item: expect.objectContaining({ id: TWO_PACK, price: 1299 }), quantity: 2 }),
      expect.objectContaining({ item: expect.objectContaining({ id: TRAVEL, price: 1999 }), quantity: 1 }),
    ],
    totals: expect.arrayContaining([ucpTotal('subtotal', 4597), ucpTotal('total', total)]),
  });
}
const UCP_PROMOTED = ucpSession({ total: 4437, discount: true });

/** A new ACP session, both lines, 10OFF applied, handed over to the buyer to pay. */
const ACP_PROMOTED = expect.objectContaining({
  id: expect.stringMatching(/^cart_[\w-]{16}$/),
  protocol: { version: ACP_VERSION },
  status: 'requires_escalation',
  currency: 'usd',
  line_items: [
    expect.objectContaining({ id: expect.stringMatching(/^cali_/), quantity: 2, variant_id: TWO_PACK }),
    expect.objectContaining({ id: expect.stringMatching(/^cali_/), quantity: 1, variant_id: TRAVEL }),
  ],
  totals: expect.arrayContaining([expect.objectContaining({ type: 'total', amount: 4437 })]),
});

describe('UCP: POST /ucp/checkout-sessions', () => {
  it.each([
    ['a session with a discount code', UCP, () => ucp(), UCP_PROMOTED],
    [
      'a platform that does not negotiate discounts, without them',
      UCP,
      () => ucp(UCP_SESSION, {}, '/no-discount.json'),
      ucpSession({ total: 4930, discount: false }),
    ],
    ['a chunked body', UCP, () => chunked(ucp()), UCP_PROMOTED],
    [
      'Content-Type with a charset',
      UCP,
      () => ucp(UCP_SESSION, { 'Content-Type': 'application/json; charset=utf-8' }),
      UCP_PROMOTED,
    ],
    ['a query string, ignored', `${UCP}?x=1`, () => ucp(), UCP_PROMOTED],
  ])('%s: 201, the new session', async (_name, url, init: Request, body) => {
    expectAnswer(await send(url, init), { status: 201, headers: ucpHeadersOf(), body });
  });

  it('a trailing slash: the new session, logged by the path as sent', async () => {
    expectAnswer(await send(`${UCP}/`, ucp()), {
      status: 201,
      headers: ucpHeadersOf(),
      body: UCP_PROMOTED,
      loggedPath: `${UCP}/`,
    });
  });

  it('a market it does not sell to: the session, the market reported', async () => {
    const answer = await send(UCP, ucp(json({ ...JSON.parse(UCP_SESSION), context: { address_country: 'AQ' } })));
    expectAnswer(answer, {
      status: 201,
      headers: ucpHeadersOf(),
      body: expect.objectContaining({
        status: 'requires_escalation',
        messages: expect.arrayContaining([expect.objectContaining({ content: expect.stringContaining('AQ') })]),
      }),
    });
  });

  it('the caller’s own X-Request-Id, echoed beside Request-Id', async () => {
    expectAnswer(await send(UCP, ucp(UCP_SESSION, { 'X-Request-Id': 'trace-7.u' })), {
      status: 201,
      headers: ucpHeadersOf({ 'x-request-id': 'trace-7.u' }),
      body: UCP_PROMOTED,
    });
  });

  it.each([
    [
      'an unknown item',
      () => ucp(json({ line_items: [{ item: { id: 'variant_none' }, quantity: 1 }] })),
      {
        ucp: { version: UCP_VERSION, status: 'error' },
        messages: [
          {
            type: 'error',
            code: 'not_found',
            severity: 'unrecoverable',
            path: '$.line_items[0].item.id',
            content: "No purchasable item 'variant_none' in this store; items are named by variant id (variant_…).",
            content_type: 'plain',
          },
        ],
        continue_url: CONTINUE_URL,
      },
    ],
    [
      'a platform without checkout',
      () => ucp(UCP_SESSION, {}, '/no-checkout.json'),
      {
        ucp: { version: UCP_VERSION, status: 'error', capabilities: {} },
        messages: [
          {
            type: 'error',
            code: 'capabilities_incompatible',
            severity: 'unrecoverable',
            content: `This business offers dev.ucp.shopping.checkout ${UCP_VERSION} over rest and mcp; the platform profile does not (declare the capability at ucp.version, and a dev.ucp.shopping service at that version with transport rest or mcp).`,
            content_type: 'plain',
          },
        ],
        continue_url: CONTINUE_URL,
      },
    ],
  ])('%s: 200 with an error_response', async (_name, init: Request, body) => {
    expectAnswer(await send(UCP, init), { status: 200, headers: ucpHeadersOf(), body });
  });

  const UNSUPPORTED_MEDIA_TYPE = ucpError(
    'unsupported_media_type',
    'Send the body as application/json.',
    'Content-Type',
  );
  const INVALID_AGENT = ucpError(
    'invalid_profile_url',
    'UCP-Agent must be a structured-field dictionary whose profile member is an absolute URL: profile="https://…".',
    'UCP-Agent',
  );
  it.each<[name: string, init: () => Init, status: number, body: unknown, echoed: boolean]>([
    // Refused before Request-Id is read: not echoed.
    ['no UCP-Agent', () => ucp(UCP_SESSION, { 'UCP-Agent': undefined }), 400, INVALID_AGENT, false],
    ['a UCP-Agent without a profile', () => ucp(UCP_SESSION, { 'UCP-Agent': 'version=1' }), 400, INVALID_AGENT, false],
    [
      'no Request-Id',
      () => ucp(UCP_SESSION, { 'Request-Id': undefined }),
      400,
      ucpError('request_id_required', 'The Request-Id header is required.', 'Request-Id'),
      false,
    ],
    [
      'a Request-Id that is not a UUID',
      () => ucp(UCP_SESSION, { 'Request-Id': 'r-1' }),
      400,
      ucpError('invalid_request_id', 'Request-Id must be a UUID.', 'Request-Id'),
      false,
    ],
    // The platform profile.
    [
      'a profile over http from a host not allowed',
      () => ucp(UCP_SESSION, { 'UCP-Agent': 'profile="http://example.com/p.json"' }),
      400,
      ucpError('invalid_profile_url', 'The platform profile URL must be https: http://example.com/p.json.'),
      true,
    ],
    [
      'a profile that is not there',
      () => ucp(UCP_SESSION, {}, '/missing.json'),
      424,
      ucpError(
        'profile_unreachable',
        'The platform profile could not be fetched: serve it with 200 at a public https address, without redirects, within 5 s and 32 KiB.',
      ),
      true,
    ],
    [
      'a profile that is not JSON',
      () => ucp(UCP_SESSION, {}, '/not-json'),
      422,
      ucpError(
        'profile_malformed',
        "The platform profile is not a valid UCP platform profile (JSON valid against UCP's profile schema).",
      ),
      true,
    ],
    [
      'a profile of another version',
      () => ucp(UCP_SESSION, {}, '/old-version.json'),
      422,
      ucpError(
        'version_unsupported',
        'The platform profile declares UCP 2026-01-23; this business supports 2026-08-25 and 2026-04-08: declare one of them as ucp.version.',
      ),
      true,
    ],
    // The key.
    [
      'no Idempotency-Key',
      () => ucp(UCP_SESSION, { 'Idempotency-Key': undefined }),
      400,
      ucpError('idempotency_key_required', 'The Idempotency-Key header is required.', 'Idempotency-Key'),
      true,
    ],
    [
      'an Idempotency-Key that is not a UUID',
      () => ucp(UCP_SESSION, { 'Idempotency-Key': 'k' }),
      400,
      ucpError('invalid_idempotency_key', 'Idempotency-Key must be a UUID.', 'Idempotency-Key'),
      true,
    ],
    // The body.
    [
      'malformed JSON',
      () => ucp('{"line_items": ['),
      400,
      ucpError('invalid_json', 'The body is not valid JSON.', '$'),
      true,
    ],
    [
      'an empty body',
      () => ucp(''),
      400,
      ucpError('invalid_request', '$.line_items is required.', '$.line_items'),
      true,
    ],
    ['an array', () => ucp('[]'), 400, ucpError('invalid_request', '$ must be object.', '$'), true],
    [
      'a missing field',
      () => ucp(json({ discounts: { codes: ['10OFF'] } })),
      400,
      ucpError('invalid_request', '$.line_items is required.', '$.line_items'),
      true,
    ],
    [
      'an invalid quantity',
      () => ucp(json({ line_items: [{ item: { id: TWO_PACK }, quantity: 0 }] })),
      400,
      ucpError('invalid_request', '$.line_items[0].quantity must be >= 1.', '$.line_items[0].quantity'),
      true,
    ],
    [
      'nested deeper than 32 levels',
      () => ucp(`{"line_items":${'['.repeat(40)}${']'.repeat(40)}}`),
      400,
      ucpError(
        'invalid_json',
        'The body must be JSON nested at most 32 levels deep and holding at most 4,096 objects and arrays.',
        '$',
      ),
      true,
    ],
    [
      'a compressed body, which UCP does not take',
      () => ucp(gzipSync(UCP_SESSION), { 'Content-Encoding': 'gzip' }),
      400,
      ucpError('invalid_json', 'The body is not valid JSON.', '$'),
      true,
    ],
    // The media type.
    ['text', () => ucp(UCP_SESSION, { 'Content-Type': 'text/plain' }), 415, UNSUPPORTED_MEDIA_TYPE, true],
    [
      'another JSON media type',
      () => ucp(UCP_SESSION, { 'Content-Type': 'application/vnd.api+json' }),
      415,
      UNSUPPORTED_MEDIA_TYPE,
      true,
    ],
    ['no Content-Type', () => ucp(UCP_SESSION, { 'Content-Type': undefined }), 415, UNSUPPORTED_MEDIA_TYPE, true],
  ])('%s: %i in UCP’s error shape', async (_name, init, status, body, echoed) => {
    expectAnswer(await send(UCP, init), { status, headers: ucpHeadersOf({}, echoed), body });
  });

  it('a body over 100 kB: 413 payload_too_large, and the connection closed', async () => {
    expectAnswer(await send(UCP, ucp(json({ pad: 'x'.repeat(110_000) }))), {
      status: 413,
      headers: ucpHeadersOf({ connection: 'close' }),
      body: ucpError('payload_too_large', 'The request body is larger than the 100 kB limit.', '$'),
    });
  });

  it('another method: 405 method_not_allowed with Allow', async () => {
    expectAnswer(await send(UCP, { ...ucp(), method: 'PUT' }), {
      status: 405,
      headers: ucpHeadersOf({ allow: 'POST' }, false),
      body: ucpError('method_not_allowed', `PUT is not supported on ${UCP}; use POST.`),
    });
  });
});

describe('ACP: POST /acp/checkout_sessions', () => {
  const INVALID_TOKEN = acpError(
    'invalid_token',
    'The access token is expired, revoked, unknown or malformed; request a new one.',
  );

  it.each([
    ['a session with a discount code', ACP, () => acp()],
    ['a chunked body', ACP, () => chunked(acp())],
    ['a query string, ignored', `${ACP}?x=1`, () => acp()],
  ])('%s: 201, the new session', async (_name, url, make) => {
    const init = make();
    expectAnswer(await send(url, init), { status: 201, headers: acpHeadersOf(init), body: ACP_PROMOTED });
  });

  it('a trailing slash: the new session, logged by the path as sent', async () => {
    const init = acp();
    expectAnswer(await send(`${ACP}/`, init), {
      status: 201,
      headers: acpHeadersOf(init),
      body: ACP_PROMOTED,
      loggedPath: `${ACP}/`,
    });
  });

  it('the caller’s Request-Id, echoed', async () => {
    const init = acp(ACP_SESSION, { 'Request-Id': 'req_42' });
    expectAnswer(await send(ACP, init), {
      status: 201,
      headers: acpHeadersOf(init, { 'request-id': 'req_42' }),
      body: ACP_PROMOTED,
    });
  });

  it.each([
    [
      'no token',
      () => acp(ACP_SESSION, { Authorization: undefined }),
      401,
      acpError(
        'unauthorized',
        "Send Authorization: Bearer <ACCESS_TOKEN>; get a token with scope cart:write from this store's OAuth token endpoint.",
      ),
      `Bearer ${RESOURCE_METADATA}`,
    ],
    [
      'an unknown token',
      () => acp(ACP_SESSION, bearer('not-a-token')),
      401,
      INVALID_TOKEN,
      `Bearer error="invalid_token", ${RESOURCE_METADATA}`,
    ],
    [
      'not a bearer token',
      () => acp(ACP_SESSION, { Authorization: 'Basic dTpw' }),
      401,
      INVALID_TOKEN,
      `Bearer error="invalid_token", ${RESOURCE_METADATA}`,
    ],
    [
      'a token without cart:write',
      () => acp(ACP_SESSION, bearer(readOnlyToken)),
      403,
      acpError('insufficient_scope', 'This API needs the scope "cart:write", which the token was not granted.'),
      `Bearer error="insufficient_scope", scope="cart:write", ${RESOURCE_METADATA}`,
    ],
  ])('%s: %i with its WWW-Authenticate challenge', async (_name, init: Request, status, body, challenge) => {
    expectAnswer(await send(ACP, init), {
      status,
      headers: acpHeadersOf(undefined, { 'www-authenticate': challenge }),
      body,
    });
  });

  it.each([
    [
      'no API-Version',
      () => acp(ACP_SESSION, { 'API-Version': undefined }),
      {
        ...acpError('missing_api_version', `Send API-Version: ${ACP_VERSION}.`, 'API-Version'),
        supported_versions: [ACP_VERSION],
      },
    ],
    [
      'another API-Version',
      () => acp(ACP_SESSION, { 'API-Version': '2025-09-29' }),
      {
        ...acpError('unsupported_api_version', 'API-Version 2025-09-29 is not supported.', 'API-Version'),
        supported_versions: [ACP_VERSION],
      },
    ],
    [
      'no Idempotency-Key',
      () => acp(ACP_SESSION, { 'Idempotency-Key': undefined }),
      acpError('idempotency_key_required', 'Every POST needs an Idempotency-Key header.', 'Idempotency-Key'),
    ],
    [
      'an Idempotency-Key too long',
      () => acp(ACP_SESSION, { 'Idempotency-Key': 'k'.repeat(256) }),
      acpError('invalid_idempotency_key', 'Idempotency-Key is at most 255 characters.', 'Idempotency-Key'),
    ],
  ])('%s: 400, before the key is taken', async (_name, init: Request, body) => {
    expectAnswer(await send(ACP, init), { status: 400, headers: acpHeadersOf(undefined), body });
  });

  it.each([
    [
      'an unknown item',
      () => acp(json({ line_items: [{ id: 'variant_none', quantity: 1 }], currency: 'usd', capabilities: {} })),
      400,
      acpError(
        'item_not_found',
        "No purchasable item 'variant_none' in this store; items are named by variant id (variant_…).",
        '$.line_items[0].id',
      ),
    ],
    ['malformed JSON', () => acp('{'), 400, acpError('invalid_json', 'The body is not valid JSON.', '$')],
    ['an empty body', () => acp(''), 400, acpError('missing_field', '$.line_items is required.', '$.line_items')],
    [
      'a missing field',
      () => acp(json({ currency: 'usd' })),
      400,
      acpError('missing_field', '$.line_items is required.', '$.line_items'),
    ],
    [
      'an unknown currency',
      () => acp(json({ ...JSON.parse(ACP_SESSION), currency: 'xyz' })),
      400,
      acpError(
        'unsupported_currency',
        'This store does not sell in xyz; use one of usd, eur, gbp, cad, jpy.',
        '$.currency',
      ),
    ],
    [
      'text',
      () => acp(ACP_SESSION, { 'Content-Type': 'text/plain' }),
      415,
      acpError('unsupported_media_type', 'Send the body as application/json.', 'Content-Type'),
    ],
  ])('%s: %i in ACP’s error shape, the key echoed', async (_name, make, status, body) => {
    const init = make();
    expectAnswer(await send(ACP, init), { status, headers: acpHeadersOf(init), body });
  });

  it('a body over 100 kB: 413 payload_too_large, and the connection closed', async () => {
    const init = acp(json({ pad: 'x'.repeat(110_000) }));
    expectAnswer(await send(ACP, init), {
      status: 413,
      headers: acpHeadersOf(init, { connection: 'close' }),
      body: acpError('payload_too_large', 'The request body is larger than the 100 kB limit.', '$'),
    });
  });

  it('a read of the collection: 405 method_not_allowed with Allow', async () => {
    expectAnswer(await send(ACP, { headers: acp().headers }), {
      status: 405,
      headers: acpHeadersOf(undefined, { allow: 'POST' }),
      body: acpError('method_not_allowed', `GET is not supported on ${ACP}; use POST.`),
    });
  });
});

describe('replays and conflicts', () => {
  it('UCP: the key again replays the stored answer byte for byte; with another body, 409', async () => {
    const init = ucp(UCP_SESSION, { 'Idempotency-Key': randomUUID() });
    const created = await send(UCP, init);
    expectAnswer(created, { status: 201, headers: ucpHeadersOf(), body: UCP_PROMOTED });
    for (let replay = 0; replay < 2; replay++) {
      const replayed = await send(UCP, init);
      expectAnswer(replayed, { status: 201, headers: ucpHeadersOf({ 'idempotent-replayed': 'true' }) });
      expect(replayed.text).toBe(created.text);
    }
    const conflicting = { ...init, body: String(init.body).replace('"quantity":2', '"quantity":3') };
    expectAnswer(await send(UCP, conflicting), {
      status: 409,
      headers: ucpHeadersOf(),
      body: expect.objectContaining({ code: 'idempotency_conflict', continue_url: CONTINUE_URL }),
    });
  });

  it('ACP: the key again replays the stored answer byte for byte; with another body, 422', async () => {
    const init = acp();
    const created = await send(ACP, init);
    expectAnswer(created, { status: 201, headers: acpHeadersOf(init), body: ACP_PROMOTED });
    for (let replay = 0; replay < 2; replay++) {
      const replayed = await send(ACP, init);
      expectAnswer(replayed, { status: 201, headers: acpHeadersOf(init, { 'idempotent-replayed': 'true' }) });
      expect(replayed.text).toBe(created.text);
    }
    const conflicting = { ...init, body: String(init.body).replace('"quantity":2', '"quantity":3') };
    expectAnswer(await send(ACP, conflicting), {
      status: 422,
      headers: acpHeadersOf(init),
      body: expect.objectContaining({ type: 'invalid_request', code: 'idempotency_conflict' }),
    });
  });
});

describe('rate limit and draining', () => {
  it.each([
    ['UCP', UCP, () => ucp()],
    ['UCP, with a malformed body (the limit is checked first)', UCP, () => ucp('{')],
  ])('the 429 of an address over its limit: %s', async (_name, url, init: Request) => {
    const address = requests.newAddress();
    for (let sent = 0; sent < LIMIT; sent++)
      expect((await send('/checkout_sessions/cart_nothing_here', {}, address)).status).toBe(404);
    expectAnswer(await send(url, init, address), {
      status: 429,
      headers: { ...JSON_BODY, ...NOT_STORED, ...rateLimited(LIMIT) },
      body: ucpError('rate_limited', `Rate limit of ${LIMIT} requests per minute exceeded.`),
    });
  });

  it.each([
    ['ACP', () => acp()],
    ['ACP, without a token (the limit is checked first)', () => acp(ACP_SESSION, { Authorization: undefined })],
  ])('the 429 of an address over its limit: %s', async (_name, init: Request) => {
    const address = requests.newAddress();
    for (let sent = 0; sent < LIMIT; sent++)
      expect((await send('/checkout_sessions/cart_nothing_here', {}, address)).status).toBe(404);
    expectAnswer(await send(ACP, init, address), {
      status: 429,
      headers: { ...JSON_BODY, ...NOT_STORED, ...rateLimited(LIMIT), 'api-version': ACP_VERSION },
      body: acpError(
        'rate_limit_exceeded',
        `Rate limit of ${LIMIT} requests per minute exceeded.`,
        undefined,
        'service_unavailable',
      ),
    });
  });

  it.each([
    ['a drain that begins while a session is created', drainingOnceCounted],
    ['while draining', whileDraining],
  ])('%s: the new session, with Connection: close', async (_name, draining) => {
    expectAnswer(await draining(api, () => send(UCP, ucp())), {
      status: 201,
      headers: ucpHeadersOf({ connection: 'close' }),
      body: UCP_PROMOTED,
    });
    const init = acp();
    expectAnswer(await draining(api, () => send(ACP, init)), {
      status: 201,
      headers: acpHeadersOf(init, { connection: 'close' }),
      body: ACP_PROMOTED,
    });
  });

  it('a drain that begins while a body over 100 kB is refused: one Connection: close', async () => {
    const answer = await drainingOnceCounted(api, () => send(UCP, ucp(json({ pad: 'x'.repeat(110_000) }))));
    expectAnswer(answer, {
      status: 413,
      headers: ucpHeadersOf({ connection: 'close' }),
      body: ucpError('payload_too_large', 'The request body is larger than the 100 kB limit.', '$'),
    });
  });
});

describe.skipIf(!serverUrl)('with PostgreSQL unreachable', () => {
  let outage: ServiceBehindProxy;
  beforeAll(async () => {
    outage = await startServiceBehindProxy({ ...PROTOCOL_ENV, TRUST_PROXY: '1' }, { log: requests.log });
  });
  afterAll(async () => {
    await outage?.close();
  });

  it('UCP: 503 service_unavailable, with Retry-After', async () => {
    const answer = await whilePostgresCut(outage, () => send(UCP, ucp(), undefined, outage.api));
    // The default limit of 100,000 a minute (test/support/service.ts).
    expectAnswer(answer, {
      status: 503,
      headers: ucpHeadersOf({ ...rateLimit(100_000, 99_999), 'retry-after': '5' }),
      body: ucpError(
        'service_unavailable',
        'The service is temporarily unavailable; nothing was changed. Retry after Retry-After seconds.',
      ),
    });
  });
});
