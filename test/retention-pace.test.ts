// The purge keeps pace with the documented write limit (issue #29): a sweep once deleted at most 20 batches of 500 rows
// per kind (2,000 a minute at the 5-minute sweep), which four addresses creating sessions at full rate outran. A
// backlog far larger than one batch, and larger than that old bound, is gone after one sweep.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepRetention } from '../src/services/retention.js';
import { startTestService, type TestService } from './support/service.js';

/** More than the 10,000 rows a sweep once deleted per kind, and 25 batches of 500. */
const BACKLOG = 12_000;
const DAY = 24 * 60 * 60 * 1000;
const SEEDED_PER_STATEMENT = 1_000;

let clock = Date.parse('2026-11-01T12:00:00Z');
let api: TestService;
beforeAll(async () => {
  api = await startTestService({ now: () => clock });
});
afterAll(async () => {
  await api?.close();
});

const db = () => api.service.deps.db;
const count = async (table: string) => Number((await db()(table).count({ n: '*' }))[0]!.n);

describe('a retention sweep', () => {
  it(`purges a backlog of ${BACKLOG} expired idempotency records in one sweep`, async () => {
    const response = await api.http('/checkout_sessions', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'pace-seed' },
      body: JSON.stringify({ items: [{ id: 'variant_01tongue2pack' }] }),
    });
    expect(response.status).toBe(201);
    // The backlog: copies of that create's record under other keys, as many creates would have left them.
    // In statements of 1,000 rows: each well within the service's statement timeout on a loaded machine.
    for (let from = 1; from < BACKLOG; from += SEEDED_PER_STATEMENT) {
      await db().raw(
        `insert into idempotency_keys
         select (jsonb_populate_record(null::idempotency_keys,
           to_jsonb(seed) || jsonb_build_object('key', 'pace-' || n))).*
         from idempotency_keys as seed, generate_series(?::int, ?::int) as n where seed.key = 'pace-seed'`,
        [from, Math.min(BACKLOG - 1, from + SEEDED_PER_STATEMENT - 1)],
      );
    }
    expect(await count('idempotency_keys')).toBe(BACKLOG);

    clock += 2 * DAY; // every record is past its 24 h
    const deleted = await sweepRetention(api.service.deps);
    expect(deleted.idempotencyRecords).toBe(BACKLOG);
    expect(await count('idempotency_keys')).toBe(0);
  });
});
