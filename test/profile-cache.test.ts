// The platform-profile cache under the attack of issue #29 (finding 1), at small scale: anonymous UCP requests each
// naming a different valid profile. The business keeps only what negotiation needs, in bytes it bounds, and fetches
// at most UCP_PROFILE_FETCHES_PER_MINUTE profiles for one address; past that the address gets UCP's 429.
import { randomInt, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROTOCOL_ENV, platformProfile, protocolFetch, ucpHeaders } from './support/protocols.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

const redisUrl = process.env.TEST_REDIS_URL?.trim() || undefined;

/** Serves a valid platform profile padded to `bytes` at every path, and counts the fetches. */
async function startPaddedProfiles(
  bytes: number,
): Promise<{ base: string; fetches: () => number; close(): Promise<void> }> {
  const profile = platformProfile() as { ucp: Record<string, unknown> };
  profile.ucp.padding = '';
  profile.ucp.padding = 'x'.repeat(bytes - JSON.stringify(profile).length);
  const body = JSON.stringify(profile);
  let fetches = 0;
  const server: Server = createServer((_request, response) => {
    fetches += 1;
    response.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fetches: () => fetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A UCP read that negotiates the profile at `profile` first (the session need not exist). */
function readNaming(api: TestService, profile: string, headers: Record<string, string> = {}) {
  return protocolFetch(api, `/ucp/checkout-sessions/${randomUUID()}`, { headers: ucpHeaders(profile, headers) });
}

/** The heap after full collections: what the service still holds. */
function heapHeld(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('many distinct valid profiles from one address', () => {
  let api: TestService;
  let profiles: Awaited<ReturnType<typeof startPaddedProfiles>>;
  beforeAll(async () => {
    profiles = await startPaddedProfiles(30 * 1024);
    api = await startTestService({ env: { ...PROTOCOL_ENV, UCP_PROFILE_FETCHES_PER_MINUTE: '5' } });
  });
  afterAll(async () => {
    await api?.close();
    await profiles?.close();
  });

  it('are fetched up to the budget; past it the address is refused 429 with Retry-After, and known ones still serve', async () => {
    const urls = Array.from({ length: 8 }, (_, index) => `${profiles.base}/profile-${index}.json`);
    const answers = [];
    for (const url of urls) answers.push(await readNaming(api, url));
    expect(answers.map(({ response }) => response.status === 429)).toEqual([...Array(5).fill(false), true, true, true]);
    for (const { response, body } of answers.slice(5)) {
      expect(body.code).toBe('rate_limited');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(profiles.fetches()).toBe(5);
    // A profile already fetched costs nothing: the address may still name it.
    expect((await readNaming(api, urls[0]!)).response.status).not.toBe(429);
    expect(profiles.fetches()).toBe(5);
  });
});

describe('one platform named by a checkout and an order read', () => {
  let api: TestService;
  let profiles: Awaited<ReturnType<typeof startPaddedProfiles>>;
  beforeAll(async () => {
    profiles = await startPaddedProfiles(2 * 1024);
    api = await startTestService({ env: PROTOCOL_ENV });
  });
  afterAll(async () => {
    await api?.close();
    await profiles?.close();
  });

  it('is fetched once: checkouts and order reads share the one profile cache and fetch budget', async () => {
    const profile = `${profiles.base}/${randomUUID()}.json`;
    // Both answers come from the negotiated profile: no such session; no order capability declared in it.
    const checkout = await readNaming(api, profile);
    expect([checkout.response.status, checkout.body.messages[0].code]).toEqual([200, 'not_found']);
    const order = await protocolFetch(api, `/ucp/orders/order_${randomUUID()}`, {
      headers: ucpHeaders(profile, { 'Idempotency-Key': '' }),
    });
    expect([order.response.status, order.body.messages[0].code]).toEqual([200, 'capabilities_incompatible']);
    expect(profiles.fetches()).toBe(1);
  });
});

describe.skipIf(!redisUrl)('two instances sharing Redis', () => {
  let database: TestDatabase;
  let one: TestService;
  let two: TestService;
  let profiles: Awaited<ReturnType<typeof startPaddedProfiles>>;
  beforeAll(async () => {
    profiles = await startPaddedProfiles(2 * 1024);
    database = await createTestDatabase();
    const env = { ...PROTOCOL_ENV, UCP_PROFILE_FETCHES_PER_MINUTE: '3', TRUST_PROXY: 'true', REDIS_URL: redisUrl! };
    one = await startTestService({ env, database });
    two = await startTestService({ env, database });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
    await database?.drop();
    await profiles?.close();
  });

  it("count one address's profile fetches against one budget", async () => {
    // A client address of its own (TRUST_PROXY honours X-Forwarded-For), so counts never leak between runs.
    const client = { 'X-Forwarded-For': `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}` };
    const statuses = [];
    for (const [index, api] of [one, two, one, two].entries())
      statuses.push((await readNaming(api, `${profiles.base}/${randomUUID()}-${index}.json`, client)).response.status);
    expect(statuses.map((status) => status === 429)).toEqual([false, false, false, true]);
    expect(profiles.fetches()).toBe(3);
  });
});

describe('the attack at small scale: hundreds of distinct 30 KB profiles at long URLs', () => {
  let api: TestService;
  let profiles: Awaited<ReturnType<typeof startPaddedProfiles>>;
  beforeAll(async () => {
    profiles = await startPaddedProfiles(30 * 1024);
    // The fetch budget is the test support's (loose): this is what one address per minute, or many addresses, send.
    api = await startTestService({ env: PROTOCOL_ENV });
  });
  afterAll(async () => {
    await api?.close();
    await profiles?.close();
  });

  it('leaves the heap holding a bounded few megabytes that stop growing, not the profiles nor every URL named', async () => {
    const HALF = 150;
    const padding = 'q'.repeat(8 * 1024);
    const name = (index: number) => `${profiles.base}/profile-${index}.json?${padding}`;
    const nameEach = async (from: number) => {
      for (let index = from; index < from + HALF; index++) {
        const { response } = await readNaming(api, name(index));
        expect(response.status).not.toBe(424);
      }
    };
    // Warm up: code paths compiled, pools and caches of the service filled, before the baseline.
    for (let index = 0; index < 20; index++) await readNaming(api, `${profiles.base}/warm-${index}.json`);
    const before = heapHeld();
    await nameEach(0);
    const half = heapHeld();
    await nameEach(HALF);
    const after = heapHeld();
    expect(profiles.fetches()).toBe(20 + 2 * HALF);
    // Named per half: 150 × (a 30 KB profile, and an 8 KB URL kept as cache key, header and parsed URL) ≈ 8 MB. Kept:
    // at most the profile cache's 2 MiB and the header cache's 1 MiB as lru-cache counts them (2 bytes a character,
    // V8 stores these in one), both full within the first half; the second half replaces entries, adding nothing.
    expect(half - before).toBeLessThan(6 * 1024 * 1024);
    expect(after - half).toBeLessThan(1.5 * 1024 * 1024);
  });
});
