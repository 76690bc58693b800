// Start-up migrations and the seed: safe to run again and again, and from several instances at once on one fresh
// PostgreSQL database (they race for knex's own tables unless serialised).
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase, prepareDatabase, type Db } from '../src/db/knex.js';
import { migrationSource } from '../src/db/migrations/index.js';
import { createLogger } from '../src/log.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
import { holdTable, pause } from './support/statements.js';

const opened: Db[] = [];
const databases: TestDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.destroy()));
  for (const database of databases.splice(0)) await database.drop();
});

async function fresh(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

async function open(database: TestDatabase, databaseStatementTimeoutMs?: number): Promise<Db> {
  const db = await createDatabase(
    { databaseUrl: database.env.DATABASE_URL, pgliteDir: database.env.PGLITE_DIR ?? '', databaseStatementTimeoutMs },
    createLogger('silent'),
  );
  opened.push(db);
  return db;
}

async function rowCounts(db: Db): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['regions', 'products', 'variants', 'variant_prices', 'reviews', 'promotions']) {
    counts[table] = Number((await db(table).count({ n: '*' }))[0]!.n);
  }
  return counts;
}

describe('start-up migrations and seed', () => {
  it.skipIf(!serverUrl)(
    'migrate without the statement timeout that bounds requests: one waiting on a lock longer than that completes',
    async () => {
      const database = await fresh();
      await prepareDatabase(await open(database));
      // Migrations undone back to 008, which adds triggers to the catalogue's tables, so it waits for a lock held on one.
      const undo = await open(database);
      const applied = async () => undo('knex_migrations').where({ name: '008_catalog_version_truncate' });
      while ((await applied()).length > 0) await undo.migrate.down({ migrationSource });
      const held = await holdTable(database, 'regions', 'access exclusive');
      const db = await open(database, 200);
      const migrating = prepareDatabase(db);
      await pause(600);
      await held.release();
      await migrating;
      expect(await db('knex_migrations').where({ name: '008_catalog_version_truncate' })).toHaveLength(1);
    },
  );

  it('can run twice without duplicating anything', async () => {
    const db = await open(await fresh());
    await prepareDatabase(db);
    const first = await rowCounts(db);
    await prepareDatabase(db);
    expect(await rowCounts(db)).toEqual(first);
    expect(first).toMatchObject({ regions: 5, products: 2, variants: 2, variant_prices: 10, promotions: 5 });
  });

  it.skipIf(!serverUrl).each([1, 2, 3])(
    'runs from three instances at once on a fresh database (round %i)',
    async () => {
      const database = await fresh();
      const instances = await Promise.all([open(database), open(database), open(database)]);
      const results = await Promise.allSettled(instances.map((db) => prepareDatabase(db)));
      expect(results.map((result) => (result.status === 'rejected' ? String(result.reason) : 'ok'))).toEqual([
        'ok',
        'ok',
        'ok',
      ]);
      expect(await rowCounts(instances[0]!)).toMatchObject({ regions: 5, products: 2, reviews: 9 });
    },
  );
});
