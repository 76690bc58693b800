// Idempotency-Key on session creation: replay, conflict, in-flight, expiry, and one cart under concurrency, in the
// create's two statements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { statementsDuring } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
let clock = Date.parse('2026-11-21T12:00:00Z');
beforeAll(async () => {
  api = await startTestService({ now: () => clock });
});
afterAll(async () => {
  await api?.close();
});

const body = { items: [{ id: 'variant_01tongue2pack', quantity: 2 }], promo_codes: ['10OFF'] };

async function create(key: string, payload: unknown = body) {
  const response = await api.http('/checkout_sessions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  return { status: response.status, body: (await response.json()) as any, headers: response.headers };
}
const cartCount = async () => Number((await api.service.deps.db('carts').count({ n: '*' }))[0]!.n);

/** The record of a request still working under `key`, as earlier releases claimed a key before building the session. */
async function inFlightRecord(key: string, leaseMs: number) {
  const { sortedKeysHash: requestHash } = await import('../src/services/idempotency/index.js');
  await api.service.deps.db('idempotency_keys').insert({
    scope: 'createCheckoutSession',
    key,
    request_hash: requestHash(body),
    state: 'in_flight',
    created_at: new Date(clock),
    expires_at: new Date(clock + leaseMs),
  });
}

describe('Idempotency-Key', () => {
  it('sends 2 statements, as a create without a key does: one read (which brings the key record) and the insert', async () => {
    const tables = ['regions', 'variants', 'promotions', 'carts', 'cart_line_items', 'idempotency_keys'];
    let first: Awaited<ReturnType<typeof create>> | undefined;
    const statements = await statementsDuring(api.service.deps.db, tables, async () => {
      first = await create('key-statements');
    });
    expect(first!.status).toBe(201);
    expect(statements).toBe(2);
    // A replay is answered from the read alone.
    const replayStatements = await statementsDuring(api.service.deps.db, tables, async () => {
      expect((await create('key-statements')).body).toEqual(first!.body);
    });
    expect(replayStatements).toBe(1);
  });

  it('replays the original status and body for the same key and body, building no second cart', async () => {
    const before = await cartCount();
    const first = await create('key-replay');
    const again = await create(
      'key-replay',
      JSON.stringify({ promo_codes: ['10OFF'], items: [{ quantity: 2, id: 'variant_01tongue2pack' }] }),
    );
    expect(first.status).toBe(201);
    expect(first.headers.has('idempotent-replayed')).toBe(false);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await cartCount()).toBe(before + 1);
  });

  it('answers 422 idempotency_conflict for the same key with another body', async () => {
    await create('key-conflict');
    const other = await create('key-conflict', { items: [{ id: 'variant_01tonguetravel' }] });
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({
      type: 'invalid_request',
      code: 'idempotency_conflict',
      param: 'Idempotency-Key',
    });
  });

  it('answers 409 idempotency_in_flight with Retry-After while a request holds the key', async () => {
    await inFlightRecord('key-busy', 86_400_000);
    const busy = await create('key-busy');
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('idempotency_in_flight');
    expect(busy.headers.get('retry-after')).toBe('1');
    clock += 61_000; // a claim this old (written before claims were leases) belongs to a request that died
    expect((await create('key-busy')).status).toBe(201);
  });

  it('frees a key held by a request that crashed within its 5 s lease', async () => {
    // The claim an earlier release made before its process was killed: never renewed, completed or released.
    await inFlightRecord('key-orphan', 5_000);
    clock += 4_000;
    expect((await create('key-orphan')).status).toBe(409);
    clock += 1_000;
    const retried = await create('key-orphan');
    expect(retried.status).toBe(201);
    // The completed record is then kept for its 24 h.
    const record = await api.service.deps.db('idempotency_keys').where({ key: 'key-orphan' }).first();
    expect(new Date(record.expires_at).getTime()).toBe(clock + 86_400_000);
  });

  it('takes over only the stale record it read: an answer stored meanwhile by another request stays', async () => {
    const deps = api.service.deps;
    const { insertCart } = await import('../src/db/repositories/carts.js');
    const { sortedKeysHash: requestHash } = await import('../src/services/idempotency/index.js');
    const first = await create('key-takeover');
    const stored = await deps.db('idempotency_keys').where({ key: 'key-takeover' }).first();
    const before = await cartCount();
    // A request that read an older (stale) record of this key and lost the race to the request that stored this one.
    const cart = { ...first.body, id: 'cart_late_takeover' };
    const late = await insertCart(
      deps.db,
      {
        id: cart.id,
        region_id: first.body.region_id,
        status: 'ready_for_payment',
        buyer_email: null,
        promo_codes: [],
        client_id: null,
        created_at: new Date(clock),
        updated_at: new Date(clock),
      },
      [],
      {
        answer: {
          scope: 'createCheckoutSession',
          key: 'key-takeover',
          requestHash: requestHash(body),
          status: 201,
          body: cart,
          apiVersion: stored.api_version,
          createdAt: new Date(clock),
          expiresAt: new Date(clock + 1_000),
          replaces: new Date(new Date(stored.created_at).getTime() - 1).toISOString(),
        },
      },
    );
    // Nothing stored; the insert brings the record it met, the other request's answer.
    expect(late).toMatchObject({ stored: false, keyRecord: { request_hash: stored.request_hash, state: 'completed' } });
    expect(await cartCount()).toBe(before);
    expect(await deps.db('idempotency_keys').where({ key: 'key-takeover' }).first()).toEqual(stored);
    expect((await create('key-takeover')).body).toEqual(first.body);
  });

  it('builds exactly one session when the same key arrives many times at once', async () => {
    const before = await cartCount();
    const results = await Promise.all(Array.from({ length: 12 }, () => create('key-race')));
    const created = results.filter((r) => !r.headers.has('idempotent-replayed'));
    expect(created).toHaveLength(1);
    // The key is claimed by the insert that stores the session: the others find its answer and replay it.
    for (const result of results) {
      expect(result.status).toBe(201);
      expect(result.body).toEqual(created[0]!.body);
    }
    expect(await cartCount()).toBe(before + 1);
  });

  it('never stores a failure: a failed request can be retried with its key', async () => {
    const failed = await create('key-after-failure', { items: [{ id: 'variant_nope' }] });
    expect(failed.status).toBe(400);
    const fixed = await create('key-after-failure');
    expect(fixed.status).toBe(201);
    expect(fixed.headers.has('idempotent-replayed')).toBe(false);
  });

  it('keeps keys 24 hours, then lets them be reused', async () => {
    const first = await create('key-expiry');
    clock += 23 * 3_600_000;
    expect((await create('key-expiry')).body.id).toBe(first.body.id);
    clock += 2 * 3_600_000;
    const later = await create('key-expiry', { items: [{ id: 'variant_01tonguetravel' }] });
    expect(later.status).toBe(201);
    expect(later.body.id).not.toBe(first.body.id);
    // The reused key's record is the new request's whole: its body replays, the old body now conflicts.
    const replayed = await create('key-expiry', { items: [{ id: 'variant_01tonguetravel' }] });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.body.id).toBe(later.body.id);
    expect((await create('key-expiry')).status).toBe(422);
  });

  it('rejects a key longer than 255 characters', async () => {
    const response = await create('k'.repeat(256));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'invalid_request', code: 'invalid_field', param: 'Idempotency-Key' });
    expect((await create('k'.repeat(255))).status).toBe(201);
  });
});
