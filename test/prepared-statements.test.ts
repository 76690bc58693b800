// Named statements (asPrepared, runPrepared) are prepared once per session on both storage paths: node-postgres does
// it on PostgreSQL, src/db/pglite-client.ts on PGlite. Whatever the path, a named statement answers, fails and takes
// part in transactions exactly as the same statement sent unnamed. Each check runs inside a transaction where it looks
// at the session, so that it sees the one connection that ran the statements.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asPrepared, createDatabase, runPrepared, type Db } from '../src/db/knex.js';
import { createLogger } from '../src/log.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';

let database: TestDatabase;
let db: Db;
beforeAll(async () => {
  database = await createTestDatabase();
  db = await createDatabase(
    { databaseUrl: database.env.DATABASE_URL, pgliteDir: database.env.PGLITE_DIR ?? '' },
    createLogger('silent'),
  );
  await db.raw('create table probes (id int primary key, note text, tags text[], data jsonb)');
});
afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

const INSERT = 'insert into probes (id, note, tags, data) values ($1, $2, $3, $4) returning *';
const READ = 'select id, note, tags, data, count(*) over () as total, now() as at from probes where id = any($1)';

/** What Knex and our error mapping read from a failed statement: its class, Postgres's fields and the query. */
function failure(error: unknown) {
  const { code, constraint, detail, severity, message, query, params } = error as Record<string, unknown>;
  return { class: (error as object).constructor.name, code, constraint, detail, severity, message, query, params };
}

async function failureOf(statement: Promise<unknown>) {
  return failure(
    await statement.then(
      () => expect.fail('the statement should have failed'),
      (error: unknown) => error,
    ),
  );
}

describe('named statements', () => {
  it('are parsed once per session and then only executed', async () => {
    await db.transaction(async (trx) => {
      await runPrepared(trx, 'probe_insert', INSERT, [1, 'one', ['a'], { n: 1 }]);
      await runPrepared(trx, 'probe_insert', INSERT, [2, 'two', ['b'], { n: 2 }]);
      await asPrepared('probe_read_builder', trx('probes').where({ id: 1 }));
      await asPrepared('probe_read_builder', trx('probes').where({ id: 2 }));
      const { rows } = await trx.raw(
        `select name, statement, generic_plans + custom_plans as runs from pg_prepared_statements
         where name like 'probe_%' order by name`,
      );
      expect(rows).toEqual([
        { name: 'probe_insert', statement: INSERT, runs: 2 },
        {
          name: 'probe_read_builder',
          statement: trx('probes').where({ id: 1 }).toSQL().toNative().sql,
          runs: 2,
        },
      ]);
    });
  });

  it('answer the rows, with their types, that the same statement sent unnamed answers', async () => {
    await db('probes').insert([
      { id: 5, note: 'five', tags: ['x', 'y'], data: { n: [5] } },
      { id: 6, note: null, tags: [], data: null },
    ]);
    const named = await runPrepared(db, 'probe_read', READ, [[5, 6]]);
    const unnamed = (await db.raw(READ.replace('$1', '?'), [[5, 6]])).rows as unknown[];
    expect(named).toHaveLength(2);
    const withoutClock = (rows: unknown[]) => rows.map((row) => ({ ...(row as object), at: expect.any(Date) }));
    expect(named).toEqual(withoutClock(unnamed));
    expect(named).toContainEqual(
      expect.objectContaining({
        id: 5,
        note: 'five',
        tags: ['x', 'y'],
        data: { n: [5] },
        total: 2,
        at: expect.any(Date),
      }),
    );
  });

  it('never stand for two texts under one name', async () => {
    await db.transaction(async (trx) => {
      await runPrepared(trx, 'probe_one_text', 'select 1 as one', []);
      await expect(runPrepared(trx, 'probe_one_text', 'select 2 as two', [])).rejects.toThrow(
        /was used for a different statement/,
      );
    });
  });

  it('fail as the statement sent unnamed fails, and the next statement runs', async () => {
    const values = [20, 'twenty', [], {}];
    await runPrepared(db, 'probe_insert_again', INSERT, values);
    const unnamed = await failureOf(db.raw(INSERT.replace(/\$\d/g, '?'), values));
    const named = await failureOf(runPrepared(db, 'probe_insert_again', INSERT, values));
    expect(unnamed).toMatchObject({ code: '23505', constraint: 'probes_pkey' });
    expect(named).toEqual(unnamed);
    // The statement is kept: the same name and text run again, with the next call's values.
    expect(await runPrepared(db, 'probe_insert_again', INSERT, [21, 'twenty-one', [], {}])).toMatchObject([{ id: 21 }]);
    expect((await db.raw('select count(*) as n from probes where id >= 20')).rows).toEqual([{ n: 2 }]);
  });

  it('that fail to parse fail as unnamed ones, every time', async () => {
    const missing = 'select * from no_such_table where id = $1';
    const unnamed = await failureOf(db.raw(missing.replace('$1', '?'), [1]));
    expect(unnamed).toMatchObject({ code: '42P01' });
    for (const _ of [1, 2]) {
      expect(await failureOf(runPrepared(db, 'probe_missing', missing, [1]))).toEqual(unnamed);
    }
    expect((await db.raw('select 1 as ok')).rows).toEqual([{ ok: 1 }]);
  });

  it('run inside the open transaction: rolled back with it, and still usable after', async () => {
    const rollback = new Error('roll back');
    await expect(
      db.transaction(async (trx) => {
        await runPrepared(trx, 'probe_insert_in_transaction', INSERT, [10, 'ten', [], {}]);
        expect((await trx.raw('select count(*) as n from probes where id = 10')).rows).toEqual([{ n: 1 }]);
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect((await db.raw('select count(*) as n from probes where id = 10')).rows).toEqual([{ n: 0 }]);
    await runPrepared(db, 'probe_insert_in_transaction', INSERT, [10, 'ten', [], {}]);
    expect((await db.raw('select count(*) as n from probes where id = 10')).rows).toEqual([{ n: 1 }]);
  });

  it('that fail inside a transaction fail it as unnamed ones do', async () => {
    const failed = await db
      .transaction(async (trx) => {
        await runPrepared(trx, 'probe_insert_in_transaction', INSERT, [11, 'eleven', [], {}]);
        await runPrepared(trx, 'probe_insert_in_transaction', INSERT, [11, 'eleven', [], {}]);
      })
      .then(() => expect.fail('the transaction should have failed'), failure);
    expect(failed).toMatchObject({ code: '23505', constraint: 'probes_pkey' });
    expect((await db.raw('select count(*) as n from probes where id = 11')).rows).toEqual([{ n: 0 }]);
  });
});

describe("the service's PostgreSQL sessions", () => {
  it('never JIT-compile a statement, however costly the planner estimates it', async () => {
    // jit_above_cost 0 makes every statement costly enough: a session with JIT on compiles this one, and EXPLAIN says so.
    const plan = await db.transaction(async (trx) => {
      await trx.raw('set local jit_above_cost = 0');
      const explained = await trx.raw('explain (analyze, format json) select count(*) from probes where id = any(?)', [
        [1, 2, 3],
      ]);
      return (explained.rows[0] as Record<string, Array<Record<string, unknown>>>)['QUERY PLAN']![0]!;
    });
    expect(plan.Plan).toBeDefined();
    expect(plan).not.toHaveProperty('JIT');
  });
});
