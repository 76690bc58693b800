// Issue #29 on the protocol bindings' keyed operations: a body is checked before any transaction (finding 2: an
// abusive body once held a pooled connection idle in transaction while it was validated), a key's scope of any length
// the input limits allow is stored (a long profile URL or ACP path was a 500), and a key whose request died with its
// instance is free at once (it stayed `in_flight` for a minute).
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentToken, bearer } from './support/agent.js';
import { serverUrl } from './support/database.js';
import { processTestTimeout, startServiceProcess } from './support/process.js';
import {
  PROTOCOL_ENV,
  protocolFetch,
  startProfileServer,
  ucpHeaders,
  type ProfileServer,
} from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';
import { lockWaiters, statementsSent } from './support/statements.js';
import { MAX_CONTAINERS } from '../src/http/body.js';

let api: TestService;
let profiles: ProfileServer;
let token: string;
beforeAll(async () => {
  [api, profiles] = await Promise.all([startTestService({ env: PROTOCOL_ENV }), startProfileServer()]);
  token = await agentToken(api, 'cart:write');
});
afterAll(async () => {
  await Promise.all([api?.close(), profiles?.close()]);
});

const TWO_PACK = 'variant_01tongue2pack';
const empties = (count: number) => Array.from({ length: count }, () => ({}));
/** Text PostgreSQL cannot compress into an index row: a repeated letter would fit. */
const incompressible = (length: number) => randomBytes(length).toString('base64url').slice(0, length);

function acpHeaders(key = `key-${randomUUID()}`): Record<string, string> {
  return { ...bearer(token), 'API-Version': '2026-04-17', 'Content-Type': 'application/json', 'Idempotency-Key': key };
}

const acpPost = (path: string, body: unknown, headers = acpHeaders()) =>
  protocolFetch(api, path, { method: 'POST', headers, body: JSON.stringify(body) });

async function acpSession(): Promise<string> {
  const created = await acpPost('/acp/checkout_sessions', {
    line_items: [{ id: TWO_PACK, quantity: 1 }],
    currency: 'usd',
    capabilities: {},
  });
  expect(created.response.status).toBe(201);
  return created.body.id as string;
}

/** How many transactions the service opens while `run` runs. */
async function transactionsDuring(run: () => Promise<unknown>): Promise<number> {
  const begun = statementsSent([api], (sql) => /^begin\b/i.test(sql));
  try {
    await run();
    return begun.sent;
  } finally {
    begun.stop();
  }
}

describe('a keyed operation checks its body before any transaction', () => {
  it('an ACP update of 4,000 empty fulfillment groups: 400 at the first, stored under its key, no transaction', async () => {
    const id = await acpSession();
    const headers = acpHeaders();
    // As many as the body reader lets through (MAX_CONTAINERS): the schema then refuses them at the first.
    const body = { fulfillment_groups: empties(4_000) };
    let refused: Awaited<ReturnType<typeof acpPost>> | undefined;
    expect(
      await transactionsDuring(async () => (refused = await acpPost(`/acp/checkout_sessions/${id}`, body, headers))),
    ).toBe(0);
    expect([refused!.response.status, refused!.body.code, refused!.body.param]).toEqual([
      400,
      'missing_field',
      '$.fulfillment_groups[0].id',
    ]);
    // Every answer below 500 is still the key's: the same request replays it, another conflicts.
    const replay = await acpPost(`/acp/checkout_sessions/${id}`, body, headers);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(refused!.text);
    const other = await acpPost(`/acp/checkout_sessions/${id}`, { buyer: { email: 'ada@example.com' } }, headers);
    expect([other.response.status, other.body.code]).toEqual([422, 'idempotency_conflict']);

    // A valid update opens the one transaction that changes the session and records its answer.
    expect(
      await transactionsDuring(() => acpPost(`/acp/checkout_sessions/${id}`, { buyer: { email: 'ada@example.com' } })),
    ).toBe(1);
  });

  it('a UCP update of 4,000 lines: 400 at the array bound, no transaction', async () => {
    const full = profiles.url('/full.json');
    const created = await protocolFetch(api, '/ucp/checkout-sessions', {
      method: 'POST',
      headers: ucpHeaders(full),
      body: JSON.stringify({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] }),
    });
    expect(created.response.status).toBe(201);
    let refused: Awaited<ReturnType<typeof protocolFetch>> | undefined;
    const opened = await transactionsDuring(async () => {
      refused = await protocolFetch(api, `/ucp/checkout-sessions/${created.body.id}`, {
        method: 'PUT',
        headers: ucpHeaders(full),
        body: JSON.stringify({ line_items: empties(4_000) }),
      });
    });
    expect(opened).toBe(0);
    expect([refused!.response.status, refused!.body.code, refused!.body.path]).toEqual([
      400,
      'invalid_request',
      '$.line_items',
    ]);
  });
});

describe('a body holding more objects and arrays than any request needs', () => {
  // 100 kB of empty objects is 34,000 values: refused by the body reader, before validation, hashing or storage, on
  // every surface, so no later pass over such a body costs the only thread time in proportion to it.
  const flood = (field: string) => JSON.stringify({ [field]: empties(MAX_CONTAINERS) });

  it('is refused by the one body check on ACP, UCP, MCP and the checkout surface, with nothing stored', async () => {
    const id = await acpSession();
    const acpKey = `key-${randomUUID()}`;
    const acp = await protocolFetch(api, `/acp/checkout_sessions/${id}`, {
      method: 'POST',
      headers: acpHeaders(acpKey),
      body: flood('fulfillment_groups'),
    });
    expect([acp.response.status, acp.body.param, acp.body.message]).toEqual([
      400,
      '$',
      expect.stringContaining('4,096 objects and arrays'),
    ]);
    // Not stored under its key: the same key with a valid body is served afresh.
    const valid = await protocolFetch(api, `/acp/checkout_sessions/${id}`, {
      method: 'POST',
      headers: acpHeaders(acpKey),
      body: JSON.stringify({ buyer: { email: 'ada@example.com' } }),
    });
    expect([valid.response.status, valid.response.headers.get('idempotent-replayed')]).toEqual([200, null]);

    const ucp = await protocolFetch(api, '/ucp/checkout-sessions', {
      method: 'POST',
      headers: ucpHeaders(profiles.url('/full.json')),
      body: flood('line_items'),
    });
    expect([ucp.response.status, ucp.body.path]).toEqual([400, '$']);

    const rest = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: flood('items'),
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: 'invalid_body', message: expect.stringContaining('4,096') });

    const mcp = await api.http('/checkout/mcp', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: { _meta: { pad: empties(MAX_CONTAINERS) } },
      }),
    });
    expect(mcp.status).toBe(400);
    expect(((await mcp.json()) as { error: { message: string } }).error.message).toContain('4,096 objects and arrays');
  });

  it('passes a body at the bound (the object, its array and the items) to the schema, which names the first item', async () => {
    const id = await acpSession();
    const refused = await acpPost(`/acp/checkout_sessions/${id}`, { fulfillment_groups: empties(MAX_CONTAINERS - 2) });
    expect([refused.response.status, refused.body.param]).toEqual([400, '$.fulfillment_groups[0].id']);
  });
});

describe('a key of any scope the input limits allow is stored', () => {
  it('a UCP create naming a 6 kB profile URL is created, and replayed under its key', async () => {
    const longProfile = `${profiles.url('/full.json')}?padding=${incompressible(6_000)}`;
    const headers = ucpHeaders(longProfile);
    const send = () =>
      protocolFetch(api, '/ucp/checkout-sessions', {
        method: 'POST',
        headers: { ...headers, 'Request-Id': randomUUID() },
        body: JSON.stringify({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }] }),
      });
    const created = await send();
    expect(created.response.status).toBe(201);
    const replay = await send();
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(created.text);
  });

  it('an ACP update of a 6 kB session id is 404, and replayed under its key', async () => {
    const path = `/acp/checkout_sessions/${incompressible(6_000)}`;
    const headers = acpHeaders();
    const missing = await acpPost(path, { buyer: { email: 'ada@example.com' } }, headers);
    expect([missing.response.status, missing.body.code]).toEqual([404, 'session_not_found']);
    const replay = await acpPost(path, { buyer: { email: 'ada@example.com' } }, headers);
    expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a short scope is stored as it is, so records of earlier releases still answer their keys', async () => {
    const id = await acpSession();
    const key = `key-${randomUUID()}`;
    await acpPost(`/acp/checkout_sessions/${id}/cancel`, {}, acpHeaders(key));
    const record = await api.service.deps.db('protocol_idempotency').where({ key }).first();
    expect(record.scope).toMatch(new RegExp(`^acp\\|.+\\|POST /acp/checkout_sessions/${id}/cancel$`));
  });
});

// A request killed with its instance while it holds a key: the test holds the session's row lock, so the instance's
// cancel waits inside its transaction, after every step before it (an earlier release's claim of the key included);
// the instance is then killed, and the same request sent to another instance. PostgreSQL only: one PGlite database
// cannot be shared by two processes.
describe.skipIf(!serverUrl)('a key whose request died with its instance', () => {
  it(
    'is free at once: the retry on another instance runs, and the key keeps its answer',
    async () => {
      const id = await acpSession();
      const databaseUrl = api.database.env.DATABASE_URL!;
      const doomed = await startServiceProcess({ ...PROTOCOL_ENV, DATABASE_URL: databaseUrl });
      const locker = new pg.Client({ connectionString: databaseUrl });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('select id from carts where id = $1 for update', [id]);
        const headers = acpHeaders();
        const path = `/acp/checkout_sessions/${id}/cancel`;
        const dying = fetch(`${doomed.url}${path}`, { method: 'POST', headers, body: '{}' }).catch(() => undefined);
        await lockWaiters(async (text) => (await locker.query(text)).rows, 1);
        doomed.child.kill('SIGKILL');
        await doomed.exited;
        await dying;
        await locker.query('rollback');

        const retried = await acpPost(path, {}, headers);
        expect([retried.response.status, retried.body.status]).toEqual([200, 'canceled']);
        const replay = await acpPost(path, {}, headers);
        expect(replay.response.headers.get('idempotent-replayed')).toBe('true');
        expect(replay.text).toBe(retried.text);
      } finally {
        await locker.end();
        await doomed.stop();
      }
    },
    processTestTimeout(1),
  );
});

// Two requests under one key inside their transactions at once: the test holds the session's row lock until both
// wait on it. The first to commit keeps the key; the other, finding its answer there when it stores its own (here a
// 405: the session is canceled by then), rolls back and replays the first's. PostgreSQL only (a second connection).
describe.skipIf(!serverUrl)('two requests under one key at once', () => {
  it('store one answer: the other rolls back and replays it', async () => {
    const id = await acpSession();
    const locker = new pg.Client({ connectionString: api.database.env.DATABASE_URL! });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('select id from carts where id = $1 for update', [id]);
      const headers = acpHeaders();
      const both = Promise.all([1, 2].map(() => acpPost(`/acp/checkout_sessions/${id}/cancel`, {}, headers)));
      await lockWaiters(async (text) => (await locker.query(text)).rows, 2);
      await locker.query('rollback');
      const answers = await both;
      expect(answers.map((answer) => [answer.response.status, answer.body.status])).toEqual([
        [200, 'canceled'],
        [200, 'canceled'],
      ]);
      expect(answers[0]!.text).toBe(answers[1]!.text);
      expect(answers.filter((answer) => answer.response.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
    } finally {
      await locker.end();
    }
  });
});
