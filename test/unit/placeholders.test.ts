// numberedPlaceholders turns a statement written for Knex's raw queries into the text runPrepared sends once: it must
// number the `?` exactly as Knex would, and refuse what Knex reads otherwise (`??` identifiers, escaped `\?`).
import knex from 'knex';
import { afterAll, describe, expect, it } from 'vitest';
import { numberedPlaceholders } from '../../src/db/knex.js';

// Never connects: it only turns raw queries into PostgreSQL's text.
const db = knex({ client: 'pg' });
afterAll(() => db.destroy());

describe('numberedPlaceholders', () => {
  it('numbers value placeholders as Knex does', () => {
    const sql = 'insert into t (a, b) select x, ? from unnest(?::text[], ?::int[]) as u (x, y) where y > ?';
    expect(numberedPlaceholders(sql)).toBe(
      db
        .raw(sql, ['b', ['a'], [1], 0])
        .toSQL()
        .toNative().sql,
    );
  });

  it.each([
    ['an identifier placeholder', 'select ?? from t where a = ?'],
    ['an escaped question mark', "select data \\? 'key' from t where a = ?"],
  ])('refuses %s', (_, sql) => {
    expect(() => numberedPlaceholders(sql)).toThrow(/value placeholders only/);
  });
});
