// Idempotency-Key on session creation: replay, conflict, in-flight, expiry, and one cart under concurrency.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

describe('Idempotency-Key', () => {
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

  it('answers 409 idempotency_in_flight with Retry-After while the first request runs', async () => {
    const db = api.service.deps.db;
    const { requestHash } = await import('../src/services/idempotency.js');
    await db('idempotency_keys').insert({
      scope: 'createCheckoutSession',
      key: 'key-busy',
      request_hash: requestHash(body),
      state: 'in_flight',
      created_at: new Date(clock),
      expires_at: new Date(clock + 86_400_000),
    });
    const busy = await create('key-busy');
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('idempotency_in_flight');
    expect(busy.headers.get('retry-after')).toBe('1');
    clock += 61_000; // a claim this old (written before claims were leases) belongs to a request that died
    expect((await create('key-busy')).status).toBe(201);
  });

  it('frees the key of a request that crashed holding it within the 5 s lease', async () => {
    const { claimIdempotencyKey, LEASE_MS } = await import('../src/services/idempotency.js');
    // The claim a request makes before its process is killed: it is never renewed, completed or released.
    expect(
      (await claimIdempotencyKey(api.service.deps, { scope: 'createCheckoutSession', key: 'key-orphan', body })).kind,
    ).toBe('run');
    clock += LEASE_MS - 1_000;
    expect((await create('key-orphan')).status).toBe(409);
    clock += 1_000;
    const retried = await create('key-orphan');
    expect(retried.status).toBe(201);
    // The completed record is then kept for its 24 h.
    const record = await api.service.deps.db('idempotency_keys').where({ key: 'key-orphan' }).first();
    expect(new Date(record.expires_at).getTime()).toBe(clock + 86_400_000);
  });

  it('renews the lease while the request holding it is still working', async () => {
    const { claimIdempotencyKey, whileClaimed, LEASE_MS } = await import('../src/services/idempotency.js');
    const deps = api.service.deps;
    const request = { scope: 'createCheckoutSession', key: 'key-slow', body };
    const claim = await claimIdempotencyKey(deps, request);
    const claimedAt = (claim as { claimedAt: Date }).claimedAt;
    const expiry = async () =>
      new Date((await deps.db('idempotency_keys').where({ key: 'key-slow' }).first()).expires_at).getTime();
    const firstExpiry = await expiry();
    let finish!: () => void;
    const working = whileClaimed(deps, request, claimedAt, () => new Promise<void>((resolve) => (finish = resolve)));
    clock += LEASE_MS - 1_000;
    await expect.poll(expiry, { timeout: 10_000 }).toBeGreaterThan(firstExpiry); // renewed by the real timer
    clock += 2_000; // past the first lease, inside the renewed one
    expect((await create('key-slow')).status).toBe(409);
    finish();
    await working;
  });

  it('releases only its own claim: a key taken over by a later request keeps the later claim', async () => {
    const { claimIdempotencyKey, releaseIdempotencyKey } = await import('../src/services/idempotency.js');
    const deps = api.service.deps;
    const request = { scope: 'createCheckoutSession', key: 'key-takeover', body };
    const first = await claimIdempotencyKey(deps, request);
    clock += 61_000; // the first request looks dead: a retry takes the key over
    const second = await claimIdempotencyKey(deps, request);
    expect([first.kind, second.kind]).toEqual(['run', 'run']);
    await releaseIdempotencyKey(deps, request, (first as { claimedAt: Date }).claimedAt); // the first one fails late
    const record = await deps.db('idempotency_keys').where({ scope: request.scope, key: request.key }).first();
    expect(new Date(record.created_at).getTime()).toBe((second as { claimedAt: Date }).claimedAt.getTime());
  });

  it('builds exactly one session when the same key arrives many times at once', async () => {
    const before = await cartCount();
    const results = await Promise.all(Array.from({ length: 12 }, () => create('key-race')));
    const created = results.filter((r) => r.status === 201 && !r.headers.has('idempotent-replayed'));
    expect(created).toHaveLength(1);
    for (const result of results) {
      expect([201, 409]).toContain(result.status);
      if (result.status === 201) expect(result.body.id).toBe(created[0]!.body.id);
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
  });

  it('rejects a key longer than 255 characters', async () => {
    const response = await create('k'.repeat(256));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ type: 'invalid_request', code: 'invalid_field', param: 'Idempotency-Key' });
    expect((await create('k'.repeat(255))).status).toBe(201);
  });
});
