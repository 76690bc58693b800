// Session creates are stored by group commit, and session reads batched, by statement batching (src/db/batching.ts):
// concurrent creates share one insert statement and one commit, concurrent reads one read statement. Over two
// instances on one PostgreSQL, each create is stored exactly once and answered with its own session, a key's answer
// replays from either instance, one key sent many times at once stores one session, and a member that fails (its
// variant deleted between its read and the insert) fails alone; each read answers its own session (or 404), a read
// after a write sees it, and a failed read statement fails each of its members as it fails a lone read. Statements
// are held behind a table lock so that requests pile up deterministically.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_READ } from '../src/db/repositories/carts.js';
import {
  findNewCartReads,
  NEW_CART_READS,
  type NewCartRead,
  type VariantReferences,
} from '../src/db/repositories/catalog.js';
import {
  createTestDatabase,
  serverUrl,
  SESSION_READ_TABLES,
  statementsDuring,
  type TestDatabase,
} from './support/database.js';
import { createSession as create } from './support/checkout.js';
import { startTestService, type TestService } from './support/service.js';
import {
  cancelLockWaitersUntil,
  changeCatalogVersion,
  createsWithReadsCancelled,
  holdTable,
  pause,
  statementsSent,
} from './support/statements.js';

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

const request = (index: number) => ({
  items: [{ id: TWO_PACK, quantity: 1 + (index % 5) }, { id: TRAVEL }],
  promo_codes: ['10OFF'],
  buyer: { email: `buyer${index}@example.com` },
});

async function read(api: TestService, id: string) {
  const response = await api.http(`/checkout_sessions/${id}`);
  return { status: response.status, body: (await response.json()) as any };
}

/** Statements naming one of `tables` sent by both instances while `run` runs. */
async function statementsOnBoth(
  [one, two]: TestService[],
  tables: string[],
  run: () => Promise<unknown>,
): Promise<number> {
  let onTwo = 0;
  const onOne = await statementsDuring(one!.service.deps.db, tables, async () => {
    onTwo = await statementsDuring(two!.service.deps.db, tables, run);
  });
  return onOne + onTwo;
}

/** Statements naming `carts` sent by both instances while `run` runs: the inserts (a create's read names others). */
const insertsDuring = (instances: TestService[], run: () => Promise<unknown>) =>
  statementsOnBoth(instances, ['carts'], run);

/** Resolves once the instances have answered `count` creates' reads (a read statement answers every create it carries). */
function readsAnswered(instances: TestService[]) {
  let answered = 0;
  const count = (_response: unknown, query: { sql?: string; bindings?: unknown[][] }) => {
    if (query.sql === NEW_CART_READS) answered += query.bindings![0]!.length;
  };
  for (const api of instances) api.service.deps.db.on('query-response', count);
  return {
    async reach(target: number) {
      while (answered < target) await pause(5);
    },
    stop: () => instances.forEach((api) => api.service.deps.db.off('query-response', count)),
  };
}

/** Each answer is its own request's session, stored once, with the lines and buyer that request sent. */
async function expectStoredAsAnswered(db: Knex, answers: Array<{ body: any }>, indexes: number[]) {
  expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(answers.length);
  for (const [position, answer] of answers.entries()) {
    const sent = request(indexes[position]!);
    expect(answer.body.line_items.map((line: any) => [line.item.id, line.item.quantity])).toEqual(
      sent.items.map((item) => [item.id, item.quantity ?? 1]),
    );
    const carts = await db('carts').where({ id: answer.body.id }).select('buyer_email');
    expect(carts).toEqual([{ buyer_email: sent.buyer.email }]);
    const lines = await db('cart_line_items').where({ cart_id: answer.body.id }).orderBy('position');
    expect(lines.map((line) => [line.variant_id, line.quantity])).toEqual(
      sent.items.map((item) => [item.id, item.quantity ?? 1]),
    );
  }
}

/**
 * Creates whose reads pick out different rows (regions, references of each kind, codes), and creates that fail or
 * are told something on their own: an unknown region, an unknown item, an unknown code and one out of its dates.
 */
const MIXED = [
  { items: [{ id: TWO_PACK, quantity: 2 }, { id: TRAVEL }], promo_codes: ['10OFF'] },
  { region_id: 'reg_eu', items: [{ sku: 'TS-316L-2PK-TC' }], promo_codes: ['welcome5'] },
  { region_id: 'reg_gb', items: [{ handle: 'tongue-scraper-2-pack', quantity: 3 }], coupon_code: '10off' },
  { region_id: 'reg_jp', items: [{ variant_id: TRAVEL }, { id: TWO_PACK }], promo_codes: ['WELCOME5', 'LAUNCH50'] },
  { region_id: 'reg_nowhere', items: [{ id: TWO_PACK }], promo_codes: ['10OFF'] },
  { items: [{ id: TWO_PACK }, { id: 'variant_nope' }] },
  { region_id: 'reg_ca', items: [{ id: TRAVEL, quantity: 4 }], promo_codes: ['NOPE', 'NEWYEAR27'] },
];

type Answer = Awaited<ReturnType<typeof create>>;

/** An answer without what two identical creates are given differently (their ids, the request id). */
function comparable({ status, body, headers }: Answer) {
  const ids: string[] = [body.id, ...(body.line_items ?? []).map((line: any) => line.id), body.request_id];
  let text = JSON.stringify(body);
  ids.forEach((id, index) => {
    if (id) text = text.replaceAll(id, `<id ${index}>`);
  });
  return { status, body: JSON.parse(text), replayed: headers.get('idempotent-replayed') };
}

/** A copy of the travel set, sold in the same regions, for a test to delete under a create's feet. */
async function addDoomedVariant(db: Knex) {
  await db.raw(
    `insert into variants select (jsonb_populate_record(v, '{"id": "variant_doomed", "sku": "DOOMED"}')).*
     from variants v where id = ?`,
    [TRAVEL],
  );
  await db.raw(
    `insert into variant_prices select 'variant_doomed', region_id, amount from variant_prices where variant_id = ?`,
    [TRAVEL],
  );
}
const DELETE_DOOMED_VARIANT = `delete from variant_prices where variant_id = 'variant_doomed';
  delete from variants where id = 'variant_doomed'`;

describe.skipIf(!serverUrl)('statement batching over two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let one: TestService;
  let two: TestService;
  let instances: TestService[];

  beforeAll(async () => {
    database = await createTestDatabase();
    one = await startTestService({ database });
    two = await startTestService({ database });
    instances = [one, two];
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await database?.drop();
  });

  /**
   * Holds every insert into carts (`exclusive`: reads go on) or every statement on carts (`access exclusive`), or on
   * another `table`, until `release`, which may run SQL of its own first.
   */
  const holdCarts = (mode: 'exclusive' | 'access exclusive' = 'exclusive', table = 'carts') =>
    holdTable(database, table, mode);

  it('stores concurrent creates in fewer statements, each once, each answered with its own session and key', async () => {
    const count = 24;
    const indexes = Array.from({ length: count }, (_, index) => index);
    const keyOf = (index: number) => (index % 2 === 0 ? `batched-${index}` : undefined);
    const reads = readsAnswered(instances);
    let answers: Array<Awaited<ReturnType<typeof create>>> = [];
    const inserts = await insertsDuring(instances, async () => {
      const held = await holdCarts();
      const pending = Promise.all(indexes.map((index) => create(instances[index % 2]!, request(index), keyOf(index))));
      await reads.reach(count);
      await held.release();
      answers = await pending;
    });
    reads.stop();

    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 201));
    expect(inserts).toBeLessThanOrEqual(count / 2);
    await expectStoredAsAnswered(one.service.deps.db, answers, indexes);
    expect(Number((await one.service.deps.db('carts').count({ n: '*' }))[0]!.n)).toBe(count);

    // Each key's answer was stored with its cart: the other instance replays it.
    for (const index of indexes.filter((index) => keyOf(index))) {
      const replay = await create(instances[(index + 1) % 2]!, request(index), keyOf(index));
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(answers[index]!.body);
    }
  });

  it('stores one session for a key sent many times at once to both instances, even when its requests share batches', async () => {
    const db = one.service.deps.db;
    const cartsNow = async () => Number((await db('carts').count({ n: '*' }))[0]!.n);
    const before = await cartsNow();
    const count = 12;
    const reads = readsAnswered(instances);
    const held = await holdCarts();
    // The first request on each instance goes alone; the others queue behind them and share batch statements. In a
    // region no earlier create read here, so that each of them reads (none is priced from an earlier read).
    const body = { ...request(0), region_id: 'reg_eu' };
    const pending = Promise.all(
      Array.from({ length: count }, (_, index) => create(instances[index % 2]!, body, 'one-key-many-times')),
    );
    await reads.reach(count);
    await held.release();
    const answers = await pending;
    reads.stop();

    const fresh = answers.filter((answer) => !answer.headers.has('idempotent-replayed'));
    expect(fresh).toHaveLength(1);
    for (const answer of answers) {
      expect(answer.status).toBe(201);
      expect(answer.body).toEqual(fresh[0]!.body);
    }
    expect(await cartsNow()).toBe(before + 1);
  });

  it('fails only the member whose variant was deleted after its read, with the error it gets alone', async () => {
    const db = one.service.deps.db;
    const doomed = { items: [{ id: 'variant_doomed' }] };
    // Alone (nothing else in flight), a create whose variant vanished after its read gets this answer.
    await addDoomedVariant(db);
    const held = await holdCarts();
    const reads = readsAnswered(instances);
    const alone = create(one, doomed);
    await reads.reach(1);
    await held.release(DELETE_DOOMED_VARIANT);
    const expected = await alone;
    reads.stop();
    expect(expected.status).toBe(400);
    expect(expected.body).toMatchObject({ code: 'unknown_item', param: 'items' });

    await addDoomedVariant(db);
    const count = 12;
    const indexes = Array.from({ length: count }, (_, index) => index);
    const later = readsAnswered(instances);
    const gate = await holdCarts();
    // In a region no earlier create read here, so that each of them reads (none is priced from an earlier read).
    const inGb = (index: number) => ({ ...request(index), region_id: 'reg_gb' });
    const others = Promise.all(indexes.map((index) => create(one, inGb(index), `member-${index}`)));
    await later.reach(count);
    // Every statement slot is taken by now, so this create queues with the others and shares their batch.
    const failing = create(one, doomed, 'member-doomed');
    await later.reach(count + 1);
    await gate.release(DELETE_DOOMED_VARIANT);
    const [answers, failed] = await Promise.all([others, failing]);
    later.stop();

    expect(failed.status).toBe(expected.status);
    expect(failed.body).toEqual({ ...expected.body, request_id: failed.body.request_id });
    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 201));
    await expectStoredAsAnswered(db, answers, indexes);
    // The failed member's key was freed (a failure is never replayed); the others' keys hold their answers.
    expect(await db('idempotency_keys').where({ key: 'member-doomed' })).toEqual([]);
    for (const index of indexes) {
      const replay = await create(two, inGb(index), `member-${index}`);
      expect(replay.body).toEqual(answers[index]!.body);
    }
  });

  /** Sessions to read: different carts, one whose stored code the database trims differently (a tab, as ACP sends). */
  async function sessionsToRead(api: TestService): Promise<Map<string, { status: number; body: any }>> {
    const created = await Promise.all([0, 1, 2, 3, 4].map((index) => create(api, request(index))));
    const tabbed = created[4]!.body.id as string;
    await api.service.deps
      .db('carts')
      .where({ id: tabbed })
      .update({ promo_codes: ['\t10off\n'] });
    return new Map([
      ...created.map((answer) => [answer.body.id, { status: 200, body: answer.body }] as const),
      [
        'cart_never_created',
        { status: 404, body: expect.objectContaining({ code: 'session_not_found', param: 'id' }) },
      ],
    ]);
  }

  it('reads concurrent sessions, different ones and the same one, each as its own, in fewer statements than reads', async () => {
    const expected = await sessionsToRead(one);
    const ids = [...expected.keys()];
    const count = 30;
    const targets = Array.from({ length: count }, (_, index) => ids[index % ids.length]!);
    const sent = statementsSent(instances, SESSION_READ);
    let answers: Array<Awaited<ReturnType<typeof read>>> = [];
    const statements = await statementsOnBoth(instances, SESSION_READ_TABLES, async () => {
      const held = await holdCarts('access exclusive');
      const pending = Promise.all(targets.map((id, index) => read(instances[index % 2]!, id)));
      // Two read statements per instance wait behind the lock; the other reads queue for the next ones meanwhile.
      await sent.reach(4);
      await pause(300);
      await held.release();
      answers = await pending;
    });
    sent.stop();

    expect(answers).toEqual(targets.map((id) => expected.get(id)));
    expect(statements).toBeLessThanOrEqual(count / 2);
  });

  it('answers a read after a write with the write, from either instance', async () => {
    const { body: session } = await create(one, request(1));
    for (const api of instances) expect((await read(api, session.id)).body.status).toBe('ready_for_payment');
    const cancel = await two.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(200);
    for (const api of instances) expect((await read(api, session.id)).body.status).toBe('canceled');
  });

  it('answers every member of a read statement the database cancelled as it answers a lone read: 503', async () => {
    const { body: session } = await create(one, request(2));
    const held = await holdCarts('access exclusive');
    const sent = statementsSent([one], SESSION_READ);
    const pending = Promise.all(Array.from({ length: 12 }, () => read(one, session.id)));
    await sent.reach(2);
    await pause(300);
    // Each statement waiting behind the lock is cancelled (a lone read's, then the batch's that queued meanwhile).
    const answers = await cancelLockWaitersUntil(database, pending);
    await held.release();
    sent.stop();

    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    expect(new Set(answers.map((answer) => answer.body.code))).toEqual(new Set(['service_unavailable']));
  });

  /** Holds every create's read (they read promotions) behind a lock, so that the creates sent meanwhile share one. */
  const holdCreateReads = () => holdCarts('access exclusive', 'promotions');

  it('reads concurrent creates in fewer statements, each member with its own rows, keys and failures', async () => {
    // A key stored before the batch: the same body replays it, another body conflicts with it.
    const keyed = { items: [{ id: TRAVEL, quantity: 2 }], promo_codes: ['10OFF'] };
    const stored = await create(two, keyed, 'mixed-stored');
    expect(stored.status).toBe(201);
    // Each create alone: what the same create must answer from a batch.
    const alone: Array<ReturnType<typeof comparable>> = [];
    for (const body of [...MIXED, keyed]) alone.push(comparable(await create(one, body)));

    const fillers = [0, 1];
    const members: Array<{ body: object; key?: string; expect: (answer: Answer) => void }> = [
      ...MIXED.map((body, index) => ({
        body,
        expect: (answer: Answer) => expect(comparable(answer)).toEqual(alone[index]),
      })),
      {
        body: keyed,
        key: 'mixed-stored',
        expect: (answer: Answer) => {
          expect(answer.status).toBe(201);
          expect(answer.headers.get('idempotent-replayed')).toBe('true');
          expect(answer.body).toEqual(stored.body);
        },
      },
      {
        body: MIXED[0]!,
        key: 'mixed-stored',
        expect: (answer: Answer) =>
          expect(answer).toMatchObject({ status: 422, body: { code: 'idempotency_conflict' } }),
      },
      {
        body: keyed,
        key: 'mixed-fresh',
        expect: (answer: Answer) => expect(comparable(answer)).toEqual(alone.at(-1)),
      },
    ];
    const sent = statementsSent(instances, NEW_CART_READS);
    // Creates like earlier ones (the fillers, the mixed creates made alone above) read like the others.
    await changeCatalogVersion(one);
    const held = await holdCreateReads();
    // The first read on each instance waits behind the lock; the mixed creates queue for the next statement.
    const first = Promise.all(fillers.map((index) => create(instances[index % 2]!, request(index))));
    await sent.reach(fillers.length);
    const pending = Promise.all(members.map((member, index) => create(instances[index % 2]!, member.body, member.key)));
    await pause(300);
    await held.release();
    const [filled, answers] = await Promise.all([first, pending]);
    sent.stop();

    expect(filled.map((answer) => answer.status)).toEqual(fillers.map(() => 201));
    members.forEach((member, index) => member.expect(answers[index]!));
    // The mixed creates were read in one statement per instance (a replayed or conflicting key reads nothing more).
    expect(sent.sent).toBe(fillers.length + instances.length);
    // The fresh key holds its create's answer: the other instance replays it.
    const fresh = members.findIndex((member) => member.key === 'mixed-fresh');
    const replay = await create(instances[(fresh + 1) % 2]!, keyed, 'mixed-fresh');
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(answers[fresh]!.body);
  });

  it('answers every member of a create read statement the database cancelled as it answers a lone create: 503', async () => {
    const db = one.service.deps.db;
    const cartsBefore = await db('carts').count({ n: '*' });
    const { answers, statements } = await createsWithReadsCancelled(database, one, () =>
      Array.from({ length: 12 }, (_, index) =>
        create(one, request(index), index % 2 ? `cancelled-${index}` : undefined),
      ),
    );

    expect(statements).toBeLessThan(answers.length);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    expect(new Set(answers.map((answer) => answer.body.code))).toEqual(new Set(['service_unavailable']));
    // Nothing was stored and no key was taken: each can be retried.
    expect(await db('carts').count({ n: '*' })).toEqual(cartsBefore);
    expect(await db('idempotency_keys').whereLike('key', 'cancelled-%')).toEqual([]);
  });
});

describe('statement batching on either storage', () => {
  let api: TestService;
  beforeAll(async () => {
    api = await startTestService();
  });
  afterAll(async () => {
    await api?.close();
  });

  it('stores concurrent creates each once, answered with its own session', async () => {
    const count = 16;
    const indexes = Array.from({ length: count }, (_, index) => index);
    const answers = await Promise.all(
      indexes.map((index) => create(api, request(index), index % 2 ? `either-${index}` : undefined)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(indexes.map(() => 201));
    await expectStoredAsAnswered(api.service.deps.db, answers, indexes);
    for (const index of indexes.filter((index) => index % 2)) {
      const replay = await create(api, request(index), `either-${index}`);
      expect(replay.body).toEqual(answers[index]!.body);
    }
  });

  it("reads the reads of creates made at once in one statement, each create's own rows as it reads them alone", async () => {
    const db = api.service.deps.db;
    const stored = await create(api, request(1), 'read-at-once');
    const refs = (refs: Partial<VariantReferences>) => ({ variantIds: [], skus: [], productHandles: [], ...refs });
    const key = (key: string) => ({ scope: 'createCheckoutSession', key });
    const reads: NewCartRead[] = [
      { regionId: undefined, refs: refs({ variantIds: [TWO_PACK, TRAVEL] }), codes: ['10OFF'] },
      {
        regionId: 'reg_eu',
        refs: refs({ skus: ['TS-316L-2PK-TC'] }),
        codes: ['WELCOME5', 'SPRING20'],
        key: key('none'),
      },
      { regionId: 'reg_gb', refs: refs({ productHandles: ['tongue-scraper-2-pack'] }), codes: [] },
      { regionId: 'reg_nowhere', refs: refs({ variantIds: [TRAVEL] }), codes: ['NOPE'] },
      { regionId: 'reg_jp', refs: refs({ variantIds: ['variant_nope'], skus: ['TS-316L-2PK'] }), codes: [] },
      { regionId: undefined, refs: refs({}), codes: ['LAUNCH50'], key: key('read-at-once') },
    ];
    const alone = [];
    for (const read of reads) alone.push(await findNewCartReads(db, read));
    expect(alone[5]!.keyRecord).toMatchObject({ state: 'completed', response_body: stored.body });

    const sent = statementsSent([api], NEW_CART_READS);
    const atOnce = await Promise.all(reads.map((read) => findNewCartReads(db, read)));
    sent.stop();
    expect(atOnce).toEqual(alone);
    expect(sent.sent).toBe(1);
  });

  it('answers concurrent creates that read different rows each as it answers them alone', async () => {
    const alone: Array<ReturnType<typeof comparable>> = [];
    for (const body of MIXED) alone.push(comparable(await create(api, body)));
    const answers = await Promise.all([...MIXED, ...MIXED].map((body) => create(api, body)));
    expect(answers.map(comparable)).toEqual([...alone, ...alone]);
  });

  it('reads concurrent sessions each as its own, and a read after a write sees it', async () => {
    const created = await Promise.all([0, 1, 2].map((index) => create(api, request(index))));
    const targets = Array.from({ length: 12 }, (_, index) => created[index % 3]!.body);
    const answers = await Promise.all([...targets.map((session) => read(api, session.id)), read(api, 'cart_none')]);
    expect(answers.slice(0, -1).map((answer) => answer.body)).toEqual(targets);
    expect(answers.at(-1)).toMatchObject({ status: 404, body: { code: 'session_not_found' } });

    const session = created[0]!.body;
    await api.http(`/checkout_sessions/${session.id}/cancel`, { method: 'POST' });
    expect((await read(api, session.id)).body.status).toBe('canceled');
  });
});
