import knex, { type Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { batchedPerDatabase, isDatabaseUnavailable, isRejectedInput } from '../../src/db/knex.js';
import { Store } from '../../src/db/store.js';

/** A driver error as node-postgres raises it: an Error with PostgreSQL's SQLSTATE in `code`. */
function databaseError(code: string): Error {
  return Object.assign(new Error(`SQLSTATE ${code}`), { code });
}

describe('database errors', () => {
  it.each([
    ['40P01', 'deadlock detected'],
    ['40001', 'serialization failure'],
    ['57014', 'statement timeout'],
    ['53300', 'too many connections'],
    ['08006', 'connection failure'],
    ['57P01', 'administrator shutdown'],
    ['ECONNREFUSED', 'connection refused'],
  ])('%s (%s) is transient: the same request sent again can pass', (code) => {
    expect(isDatabaseUnavailable(databaseError(code))).toBe(true);
  });

  it.each([
    ['23505', 'unique violation'],
    ['42P01', 'undefined table'],
    ['22021', 'invalid byte sequence'],
  ])('%s (%s) is not transient', (code) => {
    expect(isDatabaseUnavailable(databaseError(code))).toBe(false);
  });

  it('tells the input’s fault (a data exception) from the rest', () => {
    expect(isRejectedInput(databaseError('22021'))).toBe(true);
    expect(isRejectedInput(databaseError('40P01'))).toBe(false);
  });

  describe('in a batched statement', () => {
    /**
     * A batch of three items sent together (queued in one tick), whose statement fails with `code`; `one` answers
     * each item alone. Returns each item's outcome and the statements sent (`many` for the batch, the item alone).
     */
    async function batchFailingWith(code: string) {
      const sent: string[] = [];
      const batched = batchedPerDatabase<string, string>('test', () => ({
        one: async (item) => {
          sent.push(item);
          return item.toUpperCase();
        },
        many: async (items) => {
          sent.push(`many(${items.join(',')})`);
          throw databaseError(code);
        },
        maxBatch: 10,
        maxInFlight: 1,
      }));
      // Never connects: the batcher keeps its queue in the database's store.
      const db = knex({ client: 'pg', userParams: { store: new Store() } } as Knex.Config);
      try {
        const store = batched(db);
        const outcomes = await Promise.all(
          ['a', 'b', 'c'].map((item) => store(item).catch((error: { code: string }) => error.code)),
        );
        return { outcomes, sent };
      } finally {
        await db.destroy();
      }
    }

    it.each(['40P01', '40001'])(
      'retries a batch rolled back with %s member by member: the victim was the batch, not its members',
      async (code) => {
        expect(await batchFailingWith(code)).toEqual({
          outcomes: ['A', 'B', 'C'],
          sent: ['many(a,b,c)', 'a', 'b', 'c'],
        });
      },
    );

    it('fails every member of a batch that timed out, without sending them again', async () => {
      expect(await batchFailingWith('57014')).toEqual({ outcomes: ['57014', '57014', '57014'], sent: ['many(a,b,c)'] });
    });
  });
});
