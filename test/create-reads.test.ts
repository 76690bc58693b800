// Every create's read, ACP's, UCP's and REST's, is one statement (NEW_CART_READS) batched per instance
// (src/db/batching.ts): creates sent meanwhile share the next statement, and each is answered exactly as it is alone:
// its market's region, its items and codes, its key's replay or conflict. A read statement the database cancels
// fails each of its members as a lone read fails (503, nothing stored, no key taken). A create that reads and cannot
// store, attempt after attempt, gives up after MAX_SETTLE_ATTEMPTS with 503 and stores nothing, on every surface, and
// so does a protocol update, complete or cancel whose key can never be claimed.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CART_READS } from '../src/db/repositories/catalog.js';
import { STORE_PROTOCOL_CREATES } from '../src/db/repositories/protocol-sessions.js';
import { NotSettled } from '../src/domain/errors.js';
import { MAX_SETTLE_ATTEMPTS } from '../src/services/idempotency/index.js';
import { agentToken, bearer } from './support/agent.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
import { callTool, connectMcp } from './support/mcp.js';
import {
  cartCount,
  comparableAnswer,
  PROTOCOL_ENV,
  protocolFetch,
  startProfileServer,
  ucpHeaders,
  type ProfileServer,
} from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';
import { createsWithReadsCancelled, holdTable, pause, statementsSent } from './support/statements.js';

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

/** A create on one surface: where it goes, its body, and its key (a fresh one unless the test names it). */
interface Create {
  surface: 'acp' | 'ucp' | 'rest';
  body: object;
  key?: string;
}

/** A create's answer as it was sent: its status, its body's text and its Retry-After. */
interface Answer {
  status: number;
  text: string;
  retryAfter: string | null;
}

const ucp = (body: object, key?: string): Create => ({ surface: 'ucp', body, key });
const acp = (body: object, key?: string): Create => ({ surface: 'acp', body: { capabilities: {}, ...body }, key });
const rest = (body: object, key?: string): Create => ({ surface: 'rest', body, key });

/** A service's surfaces, authenticated as the bindings ask. */
interface Surfaces {
  api: TestService;
  token: string;
  profile: string;
}

async function send({ api, token, profile }: Surfaces, create: Create): Promise<Answer> {
  const key = create.key ?? randomUUID();
  const body = JSON.stringify(create.body);
  if (create.surface === 'rest') {
    const response = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body,
    });
    return { status: response.status, text: await response.text(), retryAfter: response.headers.get('Retry-After') };
  }
  const path = create.surface === 'ucp' ? '/ucp/checkout-sessions' : '/acp/checkout_sessions';
  const headers =
    create.surface === 'ucp'
      ? ucpHeaders(profile, { 'Idempotency-Key': key })
      : {
          ...bearer(token),
          'API-Version': '2026-04-17',
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        };
  const { response, text } = await protocolFetch(api, path, { method: 'POST', headers, body });
  return { status: response.status, text, retryAfter: response.headers.get('Retry-After') };
}

/**
 * Creates whose reads pick out different rows and answers: each market (a served country, an unserved one, none; each
 * currency, one no region sells in), items unknown or not sold, codes known and not, and a REST create among them.
 */
const MIXED: Create[] = [
  ucp({ line_items: [{ item: { id: TWO_PACK }, quantity: 2 }], discounts: { codes: ['10OFF'] } }),
  ucp({ line_items: [{ item: { id: TRAVEL }, quantity: 1 }], context: { address_country: 'de' } }),
  ucp({ line_items: [{ item: { id: TWO_PACK }, quantity: 1 }], context: { address_country: 'ZZ' } }),
  ucp({ line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }], context: { address_country: 'JP' } }),
  acp({
    line_items: [
      { id: TWO_PACK, quantity: 2 },
      { id: TRAVEL, quantity: 1 },
    ],
    currency: 'usd',
  }),
  acp({ line_items: [{ id: TRAVEL, quantity: 3 }], currency: 'gbp', discounts: { codes: ['welcome5', 'NOPE'] } }),
  acp({ line_items: [{ id: TWO_PACK, quantity: 1 }], currency: 'chf' }),
  acp({
    line_items: [
      { id: TWO_PACK, quantity: 1 },
      { id: 'sku_nope', quantity: 1 },
    ],
    currency: 'jpy',
  }),
  rest({ region_id: 'reg_eu', items: [{ sku: 'TS-316L-2PK-TC' }], promo_codes: ['welcome5'] }),
];

/** Holds every create's read (they read promotions) behind a lock, so that the creates sent meanwhile share one. */
const holdCreateReads = (database: TestDatabase) => holdTable(database, 'promotions', 'access exclusive');

describe.skipIf(!serverUrl)('protocol create reads over two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let profiles: ProfileServer;
  let instances: Surfaces[];

  beforeAll(async () => {
    database = await createTestDatabase();
    profiles = await startProfileServer();
    const apis = [
      await startTestService({ database, env: PROTOCOL_ENV }),
      await startTestService({ database, env: PROTOCOL_ENV }),
    ];
    // One client on both instances: its keys are one key space, whichever instance a request reaches.
    const token = await agentToken(apis[0]!, 'cart:write');
    instances = apis.map((api) => ({ api, token, profile: profiles.url('/full.json') }));
  });
  afterAll(async () => {
    await Promise.all(instances.map(({ api }) => api.close()));
    await profiles?.close();
    await database?.drop();
  });

  const services = () => instances.map(({ api }) => api);

  it('reads concurrent creates of every surface in one statement per instance, each answered as alone', async () => {
    const [one, two] = instances as [Surfaces, Surfaces];
    // Keys stored before the batch: the same body replays each, another body conflicts with it.
    const keyed = [
      ucp({ line_items: [{ item: { id: TRAVEL }, quantity: 2 }] }, randomUUID()),
      acp({ line_items: [{ id: TRAVEL, quantity: 2 }], currency: 'eur' }, randomUUID()),
    ];
    const stored: Answer[] = [];
    for (const create of keyed) stored.push(await send(two, create));
    const conflicting = keyed.map((create, index) => ({ ...MIXED[index * 4]!, key: create.key }));

    // Neither instance has read anything like MIXED yet, so no create is priced from an earlier read: each reads.
    const fresh = MIXED.map((create) => ({ ...create, key: randomUUID() }));
    const members = [...fresh, ...keyed, ...conflicting];
    const sent = statementsSent(services(), NEW_CART_READS);
    const batchStores = statementsSent(services(), STORE_PROTOCOL_CREATES);
    const stores = statementsSent(services(), (sql) => sql.includes('insert into protocol_idempotency'));
    const held = await holdCreateReads(database);
    // The first read on each instance waits behind the lock; the members queue for the next statement.
    const fillers = instances.map((surfaces) => send(surfaces, MIXED[0]!));
    await sent.reach(instances.length);
    const pending = Promise.all(members.map((create, index) => send(instances[index % 2]!, create)));
    await pause(300);
    await held.release();
    const [filled, answers] = await Promise.all([Promise.all(fillers), pending]);
    sent.stop();
    stores.stop();
    batchStores.stop();
    // Each create alone: what the same create must answer from a batch.
    const alone: Array<ReturnType<typeof comparableAnswer>> = [];
    for (const create of [...MIXED, ...conflicting]) alone.push(comparableAnswer(await send(one, create)));

    expect(filled.map(comparableAnswer)).toEqual(instances.map(() => alone[0]));
    expect(answers.slice(0, fresh.length).map(comparableAnswer)).toEqual(alone.slice(0, MIXED.length));
    expect(answers.slice(fresh.length, fresh.length + keyed.length)).toEqual(stored);
    expect(answers.slice(fresh.length + keyed.length).map(comparableAnswer)).toEqual(alone.slice(MIXED.length));
    // Every member was read in one statement per instance (a replay or a conflict reads nothing more).
    expect(sent.sent).toBe(instances.length * 2);
    // The fresh protocol creates, read together, were stored together too (a batch that failed would be retried
    // member by member): in fewer statements than creates, batches among them.
    const protocolStores = fresh.filter((create) => create.surface !== 'rest').length + fillers.length;
    expect(batchStores.sent).toBeGreaterThan(0);
    expect(stores.sent).toBeLessThan(protocolStores);
    // Each fresh key holds its create's answer: the other instance replays it (the protocols' byte for byte).
    for (const [index, create] of fresh.entries()) {
      const replay = await send(instances[(index + 1) % 2]!, create);
      if (create.surface === 'rest') expect(JSON.parse(replay.text)).toEqual(JSON.parse(answers[index]!.text));
      else expect(replay).toEqual(answers[index]);
    }
  });

  it('answers every member of a create read statement the database cancelled as a lone create: 503, nothing stored', async () => {
    const [one] = instances as [Surfaces];
    const before = await cartCount(one.api);
    const creates = Array.from({ length: 12 }, (_, index) => ({ ...MIXED[index % 2 ? 0 : 4]!, key: randomUUID() }));
    const { answers, statements } = await createsWithReadsCancelled(database, one.api, () =>
      creates.map((create) => send(one, create)),
    );

    expect(statements).toBeLessThan(answers.length);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    expect(new Set(answers.map((answer) => JSON.parse(answer.text).code))).toEqual(new Set(['service_unavailable']));
    expect(await cartCount(one.api)).toBe(before);
    const keys = creates.map((create) => create.key);
    expect(await one.api.service.deps.db('protocol_idempotency').whereIn('key', keys)).toEqual([]);
  });
});

/**
 * Keys (UUIDs, as UCP asks) under which nothing can be stored: every insert of their record is skipped, so a create
 * under one never settles.
 */
const NEVER_STORED = '00000000-0000-4000-8000-';
const SKIP_NEVER_STORED = [
  `create function skip_never_stored() returns trigger language plpgsql as $$
  begin
    if new.key like '${NEVER_STORED}%' then return null; end if;
    return new;
  end $$`,
  ...['idempotency_keys', 'protocol_idempotency'].map(
    (table) => `create trigger skip_never_stored before insert on ${table}
    for each row execute function skip_never_stored()`,
  ),
];

/** A key under which nothing can be stored, once neverStoring is set up. */
const neverStoredKey = () => `${NEVER_STORED}${randomUUID().slice(-12)}`;

/** Skips every insert of a key record under NEVER_STORED until the test drops skip_never_stored(). */
async function neverStoring(api: TestService): Promise<void> {
  for (const statement of SKIP_NEVER_STORED) await api.service.deps.db.raw(statement);
}

/** The Retry-After a request that never settles is answered with, as the error sets it. */
const NOT_SETTLED_RETRY_AFTER = String(new NotSettled(MAX_SETTLE_ATTEMPTS).retryAfterSeconds);

/** One tools/call on /ucp/mcp: its status, Retry-After and JSON-RPC body. */
async function ucpMcpCall(api: TestService, name: string, args: object) {
  const response = await api.http('/ucp/mcp', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return {
    status: response.status,
    retryAfter: response.headers.get('Retry-After'),
    body: (await response.json()) as any,
  };
}

describe('protocol create reads on either storage', () => {
  let surfaces: Surfaces;
  let profiles: ProfileServer;

  beforeAll(async () => {
    profiles = await startProfileServer();
    const api = await startTestService({ env: PROTOCOL_ENV });
    surfaces = { api, token: await agentToken(api, 'cart:write'), profile: profiles.url('/full.json') };
  });
  afterAll(async () => {
    await surfaces?.api.close();
    await profiles?.close();
  });

  it('answers concurrent creates of every surface each as it answers them alone', async () => {
    const alone: Array<ReturnType<typeof comparableAnswer>> = [];
    for (const create of MIXED) alone.push(comparableAnswer(await send(surfaces, create)));
    const answers = await Promise.all([...MIXED, ...MIXED].map((create) => send(surfaces, create)));
    expect(answers.map(comparableAnswer)).toEqual([...alone, ...alone]);
  });

  it(`gives a create that can never store up after ${MAX_SETTLE_ATTEMPTS} reads, on every surface: 503 with the error's Retry-After, nothing stored`, async () => {
    const { api, profile } = surfaces;
    /** Sends `create`, which must read MAX_SETTLE_ATTEMPTS times, store nothing, and give up. */
    async function givesUp(create: () => Promise<void>) {
      const before = await cartCount(api);
      const sent = statementsSent([api], NEW_CART_READS);
      await create();
      sent.stop();
      expect(sent.sent).toBe(MAX_SETTLE_ATTEMPTS);
      expect(await cartCount(api)).toBe(before);
    }
    const checkoutMcp = await connectMcp(api, '/checkout/mcp');
    await neverStoring(api);
    try {
      for (const create of [MIXED[0]!, MIXED[4]!, MIXED.at(-1)!])
        await givesUp(async () => {
          const answer = await send(surfaces, { ...create, key: neverStoredKey() });
          expect(answer.status, `${create.surface}: ${answer.text}`).toBe(503);
          expect(JSON.parse(answer.text).code).toBe('service_unavailable');
          expect(answer.retryAfter, create.surface).toBe(NOT_SETTLED_RETRY_AFTER);
        });
      // UCP over MCP: the JSON-RPC error carries the status and Retry-After the REST binding sends.
      await givesUp(async () => {
        const { status, retryAfter, body } = await ucpMcpCall(api, 'create_checkout', {
          meta: { 'ucp-agent': { profile }, 'idempotency-key': neverStoredKey() },
          checkout: MIXED[0]!.body,
        });
        expect(status).toBe(503);
        expect(retryAfter).toBe(NOT_SETTLED_RETRY_AFTER);
        expect(body.error.data).toMatchObject({
          code: 'service_unavailable',
          retry_after: Number(NOT_SETTLED_RETRY_AFTER),
        });
      });
      // The checkout MCP tool has no header: its error result says how long to wait.
      await givesUp(async () => {
        const outcome = await callTool(checkoutMcp, 'create_checkout_session', {
          items: [{ id: TWO_PACK }],
          idempotency_key: neverStoredKey(),
        });
        expect(outcome.isError).toBe(true);
        expect(outcome.texts.join(' ')).toContain(`retry after ${NOT_SETTLED_RETRY_AFTER} seconds`);
      });
      // A key that can be stored is answered at the first attempt: priced from the read of the attempts above, it
      // reads nothing.
      const sent = statementsSent([api], NEW_CART_READS);
      expect((await send(surfaces, MIXED[0]!)).status).toBe(201);
      sent.stop();
      expect(sent.sent).toBe(0);
    } finally {
      await checkoutMcp.close();
      await api.service.deps.db.raw(`drop function skip_never_stored() cascade`);
    }
  });

  it(
    'gives a protocol update, complete or cancel whose key can never be claimed up: 503 with Retry-After, nothing changed',
    { timeout: 30_000 },
    async () => {
      const { api, token, profile } = surfaces;
      const ucpSession = JSON.parse((await send(surfaces, MIXED[0]!)).text);
      const acpSession = JSON.parse((await send(surfaces, MIXED[4]!)).text);
      const acpHeaders = (key: string) => ({
        ...bearer(token),
        'API-Version': '2026-04-17',
        'Content-Type': 'application/json',
        'Idempotency-Key': key,
      });
      await neverStoring(api);
      try {
        const answers = [
          await protocolFetch(api, `/ucp/checkout-sessions/${ucpSession.id}`, {
            method: 'PUT',
            headers: ucpHeaders(profile, { 'Idempotency-Key': neverStoredKey() }),
            body: JSON.stringify({ line_items: [{ item: { id: TWO_PACK }, quantity: 3 }] }),
          }),
          await protocolFetch(api, `/acp/checkout_sessions/${acpSession.id}`, {
            method: 'POST',
            headers: acpHeaders(neverStoredKey()),
            body: JSON.stringify({ line_items: [{ id: TWO_PACK, quantity: 3 }] }),
          }),
          await protocolFetch(api, `/acp/checkout_sessions/${acpSession.id}/complete`, {
            method: 'POST',
            headers: acpHeaders(neverStoredKey()),
            body: JSON.stringify({}),
          }),
        ];
        for (const { response, body, text } of answers) {
          expect(response.status, text).toBe(503);
          expect(body.code).toBe('service_unavailable');
          expect(response.headers.get('Retry-After')).toBe(NOT_SETTLED_RETRY_AFTER);
        }
        const mcp = await ucpMcpCall(api, 'complete_checkout', {
          meta: { 'ucp-agent': { profile }, 'idempotency-key': neverStoredKey() },
          id: ucpSession.id,
          checkout: { payment: {} },
        });
        expect(mcp.status).toBe(503);
        expect(mcp.retryAfter).toBe(NOT_SETTLED_RETRY_AFTER);
        expect(mcp.body.error.data).toMatchObject({ code: 'service_unavailable' });
      } finally {
        await api.service.deps.db.raw(`drop function skip_never_stored() cascade`);
      }
      // Nothing was changed: each session reads as it was created.
      const ucpNow = await protocolFetch(api, `/ucp/checkout-sessions/${ucpSession.id}`, {
        headers: ucpHeaders(profile),
      });
      expect(ucpNow.body.line_items).toEqual(ucpSession.line_items);
      const acpNow = await protocolFetch(api, `/acp/checkout_sessions/${acpSession.id}`, {
        headers: acpHeaders(randomUUID()),
      });
      expect(acpNow.body.line_items).toEqual(acpSession.line_items);
      expect(acpNow.body.status).toBe(acpSession.status);
    },
  );
});
