import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable, isRejectedInput } from '../../src/db/knex.js';

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
});
