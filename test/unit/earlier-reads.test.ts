// The earlier reads of creates are kept by what the create named: a client chooses those keys, so the cache is bounded
// in bytes as well as in entries.
import { describe, expect, it } from 'vitest';
import { createEarlierReads, earlierReadsCache } from '../../src/services/earlier-reads.js';

describe('earlier reads', () => {
  it('keep fewer reads of long keys than the entry count allows, and the most recent ones', () => {
    const reads = earlierReadsCache<{ index: number }>();
    // A create naming 100 references spells a key of about 5 kB.
    const key = (index: number) => `${index}:${'r'.repeat(5_000)}`;
    for (let index = 0; index < 1_000; index++) reads.set(key(index), { index });
    expect(reads.size).toBeLessThan(100);
    expect(reads.get(key(999))).toEqual({ index: 999 });
    expect(reads.get(key(0))).toBeUndefined();
  });

  it('keep a thousand reads of ordinary keys', () => {
    const reads = earlierReadsCache<{ index: number }>();
    for (let index = 0; index < 1_000; index++) reads.set(`{"variantIds":["variant_${index}"],"codes":[]}`, { index });
    expect(reads.size).toBe(1_000);
  });

  it('belong to the object the service builds: two services share none', () => {
    const one = createEarlierReads();
    const other = createEarlierReads();
    one.grants.set('hash', { grant: { clientId: 'client_1', scopes: [] }, tokenHash: 'hash', expiresAt: 1 });
    expect(other.grants.get('hash')).toBeUndefined();
    expect(one.creates).not.toBe(other.creates);
  });
});
