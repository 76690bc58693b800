// The batchers of batched statements belong to the Store a database was opened with (src/db/store.ts), not to a
// module: one per statement kind and database, gone when the store is closed, and never built for a transaction.
import knexFactory from 'knex';
import { describe, expect, it } from 'vitest';
import { batchedPerDatabase, type Db } from '../../src/db/knex.js';
import { Store, storeOf, type StoreParams } from '../../src/db/store.js';

/** A database handle that never connects: building a batcher runs no statement. */
function database(store?: Store): Db {
  const userParams: Partial<StoreParams> = store ? { store } : {};
  return knexFactory({ client: 'pg', connection: 'postgres://nobody@127.0.0.1:1/none', userParams } as never);
}

const kind = () =>
  batchedPerDatabase<string, string>('test', () => ({
    one: async (item) => item,
    many: async (items) => [...items],
    maxBatch: 4,
    maxInFlight: 1,
  }));

describe('Store', () => {
  it('holds one batcher per statement kind and database, built on first use', async () => {
    const reads = kind();
    const writes = kind();
    const [one, two] = [database(new Store()), database(new Store())];
    expect(reads(one)).toBe(reads(one));
    expect(reads(one)).not.toBe(reads(two));
    expect(reads(one)).not.toBe(writes(one));
    expect(await reads(one)('x')).toBe('x');
    await Promise.all([one.destroy(), two.destroy()]);
  });

  it('reaches the store from the database it was opened with, and from nothing else', async () => {
    const store = new Store();
    const db = database(store);
    expect(storeOf(db)).toBe(store);
    const bare = database();
    expect(() => kind()(bare)).toThrow(/no store/);
    await Promise.all([db.destroy(), bare.destroy()]);
  });

  it('takes no work once closed', async () => {
    const store = new Store();
    const db = database(store);
    const reads = kind();
    reads(db);
    store.close();
    expect(() => reads(db)).toThrow(/closed/);
    await db.destroy();
  });

  it('never builds a batcher for a transaction, whose connection would serve every later caller', () => {
    const transaction = Object.assign(database(new Store()), { isTransaction: true });
    expect(() => kind()(transaction)).toThrow(/not inside a transaction/);
  });
});
