// Retention: idempotency records go after 24 h, tokens a day after expiry, abandoned agent carts after 7 days,
// sessions never paid 30 days after their last change, cancelled sessions 30 days after the cancellation (never one an
// order refers to), clients without a token for 90 days; a client holds at most 10 live tokens. The clock is the
// service's injectable one; the sweep is the one the timer runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepRetention } from '../src/services/retention.js';
import { bearer, registerClient, requestToken } from './support/agent.js';
import { payWithTestProcessor } from './support/payments.js';
import { createdSession } from './support/checkout.js';
import { startTestService, type TestService } from './support/service.js';

const DAY = 24 * 60 * 60 * 1000;
let clock = Date.parse('2026-11-01T12:00:00Z');
let api: TestService;
beforeAll(async () => {
  api = await startTestService({ now: () => clock });
});
afterAll(async () => {
  await api?.close();
});

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
const createSession = async (headers: Record<string, string> = {}): Promise<string> =>
  (await createdSession(api, { items: [{ id: 'variant_01tongue2pack' }] }, headers)).id;
const exists = async (table: string, where: Record<string, unknown>) =>
  (await api.service.deps.db(table).where(where).first()) !== undefined;

describe('live tokens per client', () => {
  it('keeps the 10 newest: issuing the 11th and 12th revokes the two oldest', async () => {
    const client = await registerClient(api, { scope: 'catalog:read' });
    const tokens = [];
    for (let i = 0; i < 12; i++) {
      tokens.push(await requestToken(api, client));
      clock += 1_000; // issued one after another
    }
    const statuses = [];
    for (const token of tokens) statuses.push((await api.http('/agent/regions', { headers: bearer(token) })).status);
    expect(statuses).toEqual([401, 401, ...Array(10).fill(200)]);
  });
});

describe('sweeps', () => {
  it('purge each kind after its period, and never a session an order refers to', async () => {
    const start = clock;
    const idle = await registerClient(api, { scope: 'catalog:read cart:write' });
    const token = await requestToken(api, idle);
    const cart = await api.http(
      '/agent/carts',
      json({ items: [{ variant_id: 'variant_01tongue2pack' }] }, bearer(token)),
    );
    expect(cart.status).toBe(201);
    const cartId = ((await cart.json()) as { id: string }).id;
    const unpaid = await createSession({ 'Idempotency-Key': 'retention-key' });
    const canceled = await createSession();
    expect((await api.http(`/checkout_sessions/${canceled}/cancel`, { method: 'POST' })).status).toBe(200);
    // A session paid, then (in the database) cancelled: its order is the record of a payment and keeps it.
    const paid = await createSession();
    await payWithTestProcessor(api, paid);
    await api.service.deps
      .db('carts')
      .where({ id: paid })
      .update({ status: 'canceled', canceled_at: new Date(clock) });

    const at = async (days: number) => {
      clock = start + days * DAY;
      return sweepRetention(api.service.deps);
    };

    await at(0.5);
    expect(await exists('idempotency_keys', { key: 'retention-key' })).toBe(true);
    expect(await exists('oauth_tokens', { client_id: idle.client_id })).toBe(true);

    const dayTwo = await at(2);
    expect(dayTwo.idempotencyRecords).toBeGreaterThanOrEqual(1);
    expect(await exists('idempotency_keys', { key: 'retention-key' })).toBe(false);
    expect(await exists('oauth_tokens', { client_id: idle.client_id })).toBe(false); // expired after 1 h, kept a day more
    expect(await exists('carts', { id: cartId })).toBe(true);

    await at(6.9);
    expect(await exists('carts', { id: cartId })).toBe(true);
    await at(7.1);
    expect(await exists('carts', { id: cartId })).toBe(false);
    expect(await exists('cart_line_items', { cart_id: cartId })).toBe(false);

    await at(29.9);
    expect((await api.http(`/checkout_sessions/${canceled}`)).status).toBe(200);
    expect((await api.http(`/checkout_sessions/${unpaid}`)).status).toBe(200);
    await at(30.1);
    expect((await api.http(`/checkout_sessions/${canceled}`)).status).toBe(404);
    expect((await api.http(`/checkout_sessions/${unpaid}`)).status).toBe(404);
    expect(await exists('cart_line_items', { cart_id: unpaid })).toBe(false);
    expect(await exists('carts', { id: paid })).toBe(true);

    const recent = await registerClient(api, { scope: 'catalog:read' });
    await at(89.9);
    expect(await exists('oauth_clients', { id: idle.client_id })).toBe(true);
    await at(90.1);
    expect(await exists('oauth_clients', { id: idle.client_id })).toBe(false);
    expect(await exists('oauth_clients', { id: recent.client_id })).toBe(true);
  });

  it('takes rows in bounded batches until none is left', async () => {
    const db = api.service.deps.db;
    const old = new Date(clock - 2 * DAY);
    const rows = Array.from({ length: 1_234 }, (_, i) => ({
      scope: 'bulk',
      key: `k${i}`,
      request_hash: 'x',
      state: 'completed',
      created_at: old,
      expires_at: old,
    }));
    for (const table of ['idempotency_keys', 'protocol_idempotency'])
      for (let i = 0; i < rows.length; i += 500) await db(table).insert(rows.slice(i, i + 500));
    expect(await sweepRetention(api.service.deps)).toMatchObject({
      idempotencyRecords: 1_234,
      protocolIdempotencyRecords: 1_234,
    });
    expect(await exists('idempotency_keys', { scope: 'bulk' })).toBe(false);
    expect(await exists('protocol_idempotency', { scope: 'bulk' })).toBe(false);
  });
});
