// A create like an earlier one is priced from the earlier one's read (src/services/earlier-reads.ts): a REST create
// without a key (createCheckoutSession), and an ACP or UCP create with or without one (createProtocolSession). It is
// stored only if the catalogue has not changed since (catalog_version, compared by the statement that stores it, which
// under a key also claims the key only then): it sends no read, answers what a fresh read would answer, and a change
// to anything a create reads, on any instance, is in the next create's answer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEW_CART_READS } from '../src/db/repositories/catalog.js';
import { TOKEN_READ } from '../src/db/repositories/oauth.js';
import { STORE_PROTOCOL_CREATES } from '../src/db/repositories/protocol-sessions.js';
import { hashSecret } from '../src/domain/auth.js';
import { agentToken, bearer, registerClient, requestToken, revokeToken } from './support/agent.js';
import { createSession as create } from './support/checkout.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
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
import { statementsSent } from './support/statements.js';

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

/** An answer without what differs between two creates of the same request (ids and the checkout URL). */
function figures(answer: { status: number; body: any }) {
  const { id: _id, payment_provider: _provider, line_items: lines, ...rest } = answer.body;
  return { status: answer.status, ...rest, line_items: lines?.map(({ id: _line, ...line }: any) => line) };
}

/** A create's answer and how many create reads its instance sent for it. */
async function createCountingReads(api: TestService, body: unknown, key?: string) {
  const sent = statementsSent([api], NEW_CART_READS);
  try {
    return { answer: await create(api, body, key), reads: sent.sent };
  } finally {
    sent.stop();
  }
}

describe('creates priced from an earlier read', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers a create like an earlier one without reading, as a fresh read would, and stores it once', async () => {
    const body = { items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }], promo_codes: ['10OFF'] };
    const first = await createCountingReads(api, body);
    expect(first.answer.status).toBe(201);
    expect(first.reads).toBe(1);
    const before = await cartCount(api);
    const again = await createCountingReads(api, { ...body, buyer: { email: 'again@example.com' } });
    expect(again.reads).toBe(0);
    expect(figures(again.answer)).toEqual(figures(first.answer));
    expect(again.answer.body.id).not.toBe(first.answer.body.id);
    expect(await cartCount(api)).toBe(before + 1);
    const stored = await api.service.deps.db('carts').where({ id: again.answer.body.id }).first();
    expect(stored).toMatchObject({ buyer_email: 'again@example.com', promo_codes: ['10OFF'] });
  });

  it('answers a create with a key like an earlier one without reading; a replay or a conflict from the record its insert meets', async () => {
    const body = { region_id: 'reg_ca', items: [{ id: TWO_PACK, quantity: 2 }], promo_codes: ['10OFF'] };
    expect((await create(api, body, randomUUID())).status).toBe(201);
    const key = randomUUID();
    const keyed = await createCountingReads(api, body, key);
    expect(keyed).toMatchObject({ reads: 0, answer: { status: 201 } });
    expect(keyed.answer.headers.get('Idempotent-Replayed')).toBeNull();
    const record = await api.service.deps.db('idempotency_keys').where({ key }).first();
    expect(record.response_body).toEqual(keyed.answer.body);
    const replay = await createCountingReads(api, body, key);
    expect(replay).toMatchObject({ reads: 0, answer: { status: 201, body: keyed.answer.body } });
    expect(replay.answer.headers.get('Idempotent-Replayed')).toBe('true');
    const conflict = await createCountingReads(api, { ...body, items: [{ id: TWO_PACK, quantity: 3 }] }, key);
    expect(conflict).toMatchObject({ reads: 0, answer: { status: 422, body: { code: 'idempotency_conflict' } } });
    // A price changed since: the insert claims nothing, the create reads, and the key holds the new price.
    const where = { variant_id: TWO_PACK, region_id: 'reg_ca' };
    const price = (await api.service.deps.db('variant_prices').where(where).first()).amount;
    await api.service.deps
      .db('variant_prices')
      .where(where)
      .update({ amount: price + 100 });
    try {
      const changedKey = randomUUID();
      const changed = await createCountingReads(api, body, changedKey);
      expect(changed).toMatchObject({ reads: 1, answer: { status: 201 } });
      expect(changed.answer.body.line_items[0].base_amount).toBe((2 * (price + 100)) / 100);
      const stored = await api.service.deps.db('idempotency_keys').where({ key: changedKey }).first();
      expect(stored.response_body).toEqual(changed.answer.body);
    } finally {
      await api.service.deps.db('variant_prices').where(where).update({ amount: price });
    }
  });

  it('prices the next creates at a price changed since, alone or sharing an insert, and stores only those', async () => {
    const db = api.service.deps.db;
    const body = { region_id: 'reg_eu', items: [{ id: TRAVEL }] };
    const first = await create(api, body);
    expect(first.status).toBe(201);
    const price = (await db('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_eu' }).first()).amount;
    await db('variant_prices')
      .where({ variant_id: TRAVEL, region_id: 'reg_eu' })
      .update({ amount: price + 100 });
    try {
      const before = await cartCount(api);
      const changed = await createCountingReads(api, body);
      expect(changed.reads).toBe(1);
      expect(changed.answer.body.line_items[0].base_amount).toBe((price + 100) / 100);
      expect(await cartCount(api)).toBe(before + 1);
      // Concurrent ones priced from the read before the change: the first goes alone, the others share an insert.
      await db('variant_prices')
        .where({ variant_id: TRAVEL, region_id: 'reg_eu' })
        .update({ amount: price + 200 });
      const concurrent = await Promise.all(Array.from({ length: 6 }, () => create(api, body)));
      expect(concurrent.map((answer) => answer.body.line_items[0].base_amount)).toEqual(
        Array(6).fill((price + 200) / 100),
      );
      expect(await cartCount(api)).toBe(before + 7);
      // And that read is the next one's.
      expect((await createCountingReads(api, body)).reads).toBe(0);
    } finally {
      await db('variant_prices').where({ variant_id: TRAVEL, region_id: 'reg_eu' }).update({ amount: price });
    }
  });

  it('judges a request that fails when priced from an earlier read by a fresh one (stock added since)', async () => {
    const db = api.service.deps.db;
    const { inventory_quantity: stock } = await db('variants').where({ id: TRAVEL }).first();
    await db('variants').where({ id: TRAVEL }).update({ inventory_quantity: 1 });
    try {
      const body = { region_id: 'reg_gb', items: [{ id: TRAVEL }] };
      expect((await create(api, body)).status).toBe(201);
      await db('variants').where({ id: TRAVEL }).update({ inventory_quantity: 5 });
      const more = await createCountingReads(api, { ...body, items: [{ id: TRAVEL, quantity: 3 }] });
      expect(more.answer.status).toBe(201);
      expect(more.reads).toBe(1);
      // Failing on a fresh read, it fails as it would without any earlier read.
      const tooMany = await create(api, { ...body, items: [{ id: TRAVEL, quantity: 6 }] });
      expect(tooMany).toMatchObject({ status: 400, body: { code: 'insufficient_stock', param: 'items[0].quantity' } });
    } finally {
      await db('variants').where({ id: TRAVEL }).update({ inventory_quantity: stock });
    }
  });

  it('counts a change to any table a create reads as a new catalogue version', async () => {
    const db = api.service.deps.db;
    const version = async () => Number((await db('catalog_version').first()).version);
    const changes: Record<string, () => Promise<unknown>> = {
      regions: () =>
        db('regions')
          .where({ id: 'reg_eu' })
          .update({ name: db.raw('name') }),
      region_countries: () =>
        db('region_countries')
          .where({ region_id: 'reg_eu' })
          .update({ iso_2: db.raw('iso_2') }),
      products: () => db('products').update({ title: db.raw('title') }),
      variants: () =>
        db('variants')
          .where({ id: TWO_PACK })
          .update({ title: db.raw('title') }),
      variant_prices: () =>
        db('variant_prices')
          .where({ variant_id: TWO_PACK })
          .update({ amount: db.raw('amount') }),
      promotions: () => db('promotions').update({ code: db.raw('code') }),
    };
    for (const [table, change] of Object.entries(changes)) {
      const before = await version();
      await change();
      expect({ table, changed: (await version()) > before }).toEqual({ table, changed: true });
    }
    // TRUNCATE fires no row trigger: each table has a statement trigger for it (seen inside a transaction undone).
    for (const table of Object.keys(changes)) {
      const before = await version();
      const trx = await db.transaction();
      let truncated: number;
      try {
        await trx.raw(`truncate ${table} cascade`);
        truncated = Number((await trx('catalog_version').first()).version);
      } finally {
        await trx.rollback();
      }
      expect({ table, changed: truncated > before }).toEqual({ table, changed: true });
    }
  });
});

/** A protocol create: where it goes, its body, and its Idempotency-Key (a fresh one unless named). */
interface ProtocolCreate {
  surface: 'ucp' | 'acp';
  body: object;
  key?: string;
}

/** A protocol create's answer, and the create reads, token reads and store statements its instance sent for it. */
async function sendProtocolCreate(
  api: TestService,
  credentials: { token: string; profile: string },
  create: ProtocolCreate,
  headerChanges: Record<string, string | undefined> = {},
) {
  const key = create.key ?? randomUUID();
  const headers =
    create.surface === 'ucp'
      ? ucpHeaders(credentials.profile, { 'Idempotency-Key': key })
      : {
          ...bearer(credentials.token),
          'API-Version': '2026-04-17',
          'Content-Type': 'application/json',
          'Idempotency-Key': key,
        };
  const path = create.surface === 'ucp' ? '/ucp/checkout-sessions' : '/acp/checkout_sessions';
  const changed = Object.entries({ ...headers, ...headerChanges }).filter(([, value]) => value !== undefined);
  const reads = statementsSent([api], NEW_CART_READS);
  const tokenReads = statementsSent([api], TOKEN_READ);
  const stores = statementsSent([api], STORE_PROTOCOL_CREATES);
  try {
    const { response, text } = await protocolFetch(api, path, {
      method: 'POST',
      headers: Object.fromEntries(changed) as Record<string, string>,
      body: JSON.stringify(create.body),
    });
    return {
      status: response.status,
      text,
      replayed: response.headers.get('Idempotent-Replayed'),
      key,
      reads: reads.sent,
      tokenReads: tokenReads.sent,
      stores: stores.sent,
    };
  } finally {
    reads.stop();
    tokenReads.stop();
    stores.stop();
  }
}

/** The answer a protocol key holds (the exact bytes of the create's answer), if any. */
async function keyAnswer(api: TestService, key: string): Promise<string | undefined> {
  return (await api.service.deps.db('protocol_idempotency').where({ key }).first())?.response_body;
}

const UCP_TWO_PACK = { line_items: [{ item: { id: TWO_PACK }, quantity: 2 }], discounts: { codes: ['10OFF'] } };
const ACP_TRAVEL = { line_items: [{ id: TRAVEL, quantity: 1 }], currency: 'gbp', capabilities: {} };

describe('protocol creates priced from an earlier read', () => {
  let api: TestService;
  let profiles: ProfileServer;
  let credentials: { token: string; profile: string };
  const send = (create: ProtocolCreate) => sendProtocolCreate(api, credentials, create);

  beforeAll(async () => {
    profiles = await startProfileServer();
    api = await startTestService({ env: PROTOCOL_ENV });
    credentials = { token: await agentToken(api, 'cart:write'), profile: profiles.url('/full.json') };
  });
  afterAll(async () => {
    await api?.close();
    await profiles?.close();
  });

  it.each([
    // UCP: a replay or a conflict is answered from the record the store brings. ACP: the create's token was read
    // earlier too, and only a stored create is answered before the token is read again (a replay or a conflict then
    // tries the store once more, and answers from its record).
    { surface: 'ucp' as const, body: UCP_TWO_PACK, conflictStatus: 409, afterStore: { tokenReads: 0, stores: 1 } },
    { surface: 'acp' as const, body: ACP_TRAVEL, conflictStatus: 422, afterStore: { tokenReads: 1, stores: 2 } },
  ])(
    '$surface: answers a create like an earlier one in the one statement that stores it, as a fresh read would; its key replays or conflicts without a read',
    async ({ conflictStatus, afterStore, ...create }) => {
      const first = await send(create);
      expect(first.status).toBe(201);
      expect(first.reads).toBe(1);
      const before = await cartCount(api);
      const again = await send(create);
      expect({ reads: again.reads, tokenReads: again.tokenReads, stores: again.stores }).toEqual({
        reads: 0,
        tokenReads: 0,
        stores: 1,
      });
      expect(comparableAnswer(again)).toEqual(comparableAnswer(first));
      expect(await cartCount(api)).toBe(before + 1);
      expect(await keyAnswer(api, again.key)).toBe(again.text);
      // The same key again: its store claims nothing and brings the key's answer, which is replayed byte for byte.
      const replay = await send({ ...create, key: again.key });
      expect(replay).toMatchObject({ status: 201, text: again.text, replayed: 'true', reads: 0, ...afterStore });
      // Another body under it (the same read): a conflict, from the same statement.
      const changed = JSON.parse(JSON.stringify(create.body).replace(/"quantity":\d/, '"quantity":3'));
      const conflict = await send({ ...create, body: changed, key: again.key });
      expect(conflict).toMatchObject({ status: conflictStatus, reads: 0, ...afterStore });
      expect(conflict.text).toContain('idempotency_conflict');
      expect(await cartCount(api)).toBe(before + 1);
    },
  );

  it('stores nothing priced at a price changed since: the create reads again, and its key holds the new price', async () => {
    const db = api.service.deps.db;
    const first = await send({ surface: 'ucp', body: UCP_TWO_PACK });
    expect(first.status).toBe(201);
    const where = { variant_id: TWO_PACK, region_id: 'reg_us' };
    const price = (await db('variant_prices').where(where).first()).amount;
    await db('variant_prices')
      .where(where)
      .update({ amount: price + 100 });
    try {
      const before = await cartCount(api);
      const changed = await send({ surface: 'ucp', body: UCP_TWO_PACK });
      expect(changed).toMatchObject({ status: 201, reads: 1 });
      expect(JSON.parse(changed.text).line_items[0].item.price).toBe(price + 100);
      expect(await keyAnswer(api, changed.key)).toBe(changed.text);
      expect(await cartCount(api)).toBe(before + 1);
      // That read is the next one's.
      expect(await send({ surface: 'ucp', body: UCP_TWO_PACK })).toMatchObject({ status: 201, reads: 0 });
    } finally {
      await db('variant_prices').where(where).update({ amount: price });
    }
  });

  it('judges a create that fails when priced from an earlier read by a fresh read, and keeps that answer', async () => {
    expect((await send({ surface: 'acp', body: ACP_TRAVEL })).status).toBe(201);
    const { inventory_quantity: stock } = await api.service.deps.db('variants').where({ id: TRAVEL }).first();
    const tooMany = await send({
      surface: 'acp',
      body: { ...ACP_TRAVEL, line_items: [{ id: TRAVEL, quantity: stock + 1 }] },
    });
    expect(tooMany.reads).toBe(1);
    expect(tooMany.status).toBeGreaterThanOrEqual(400);
    expect(await keyAnswer(api, tooMany.key)).toBe(tooMany.text);
  });
});

describe('an ACP create by a token read earlier', () => {
  let api: TestService;
  const send = (
    token: string,
    create: Omit<ProtocolCreate, 'surface'>,
    headers: Record<string, string | undefined> = {},
  ) => sendProtocolCreate(api, { token, profile: '' }, { surface: 'acp', ...create }, headers);
  /** A token for cart:write, read once by a create that stores a session, and the client it was issued to. */
  async function readToken() {
    const client = await registerClient(api, { scope: 'cart:write' });
    const token = await requestToken(api, client);
    expect(await send(token, { body: ACP_TRAVEL })).toMatchObject({ status: 201, tokenReads: 1 });
    return { client, token };
  }

  beforeAll(async () => {
    api = await startTestService({ env: PROTOCOL_ENV });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('is stored without reading the token again, and refused once the token is revoked: 401 first, nothing stored', async () => {
    const { client, token } = await readToken();
    const stored = await send(token, { body: ACP_TRAVEL });
    expect(stored).toMatchObject({ status: 201, reads: 0, tokenReads: 0, stores: 1 });
    await revokeToken(api, client, token);
    const before = await cartCount(api);
    const refused = await send(token, { body: ACP_TRAVEL });
    expect(refused).toMatchObject({ status: 401, tokenReads: 1 });
    expect(JSON.parse(refused.text)).toMatchObject({ code: 'invalid_token' });
    expect(await keyAnswer(api, refused.key)).toBeUndefined();
    // Its earlier create's key is not replayed to it either, and a check that fails waits for the token's refusal.
    expect(await send(token, { body: ACP_TRAVEL, key: stored.key })).toMatchObject({ status: 401 });
    expect(await send(token, { body: ACP_TRAVEL }, { 'API-Version': undefined })).toMatchObject({ status: 401 });
    expect(await cartCount(api)).toBe(before);
  });

  it('refuses a token expired since it was read, nothing stored', async () => {
    const { token } = await readToken();
    const stored = await send(token, { body: ACP_TRAVEL });
    expect(stored).toMatchObject({ status: 201, tokenReads: 0 });
    await api.service.deps
      .db('oauth_tokens')
      .where({ token_hash: hashSecret(token) })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const before = await cartCount(api);
    const refused = await send(token, { body: ACP_TRAVEL });
    expect(refused).toMatchObject({ status: 401, tokenReads: 1 });
    expect(await keyAnswer(api, refused.key)).toBeUndefined();
    expect(await send(token, { body: ACP_TRAVEL, key: stored.key })).toMatchObject({ status: 401 });
    expect(await cartCount(api)).toBe(before);
  });
});

describe.skipIf(!serverUrl)('creates priced from an earlier read, two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let one: TestService;
  let two: TestService;
  beforeAll(async () => {
    database = await createTestDatabase();
    one = await startTestService({ database });
    two = await startTestService({ database });
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await database?.drop();
  });

  it("prices a create at the promotion another instance's change removed, on both instances", async () => {
    const body = { region_id: 'reg_ca', items: [{ id: TWO_PACK }], promo_codes: ['10OFF'] };
    for (const api of [one, two]) expect((await create(api, body)).body.promo_codes).toEqual(['10OFF']);
    const promotion = await one.service.deps.db('promotions').where({ code: '10OFF' }).first();
    await one.service.deps.db('promotions').where({ code: '10OFF' }).delete();
    try {
      for (const api of [two, one]) {
        const after = await createCountingReads(api, body);
        expect(after.reads).toBe(1);
        expect(after.answer.body.promo_codes).toEqual([]);
      }
    } finally {
      await one.service.deps.db('promotions').insert(promotion);
    }
  });
});
