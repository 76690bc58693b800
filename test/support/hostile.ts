// Generators of hostile input and the checks every hostile-input property shares: garbage bodies and content types,
// a fingerprint of all stored rows (a failed request must leave it unchanged), and what a harmless answer looks like.
import fc from 'fast-check';
import type { Knex } from 'knex';
import { expect } from 'vitest';

/** Row count and content hash of every table: any change to stored data changes it. */
export async function fingerprint(db: Knex): Promise<string> {
  const tables = (
    (
      await db.raw(
        `select tablename from pg_tables where schemaname = current_schema() and tablename not like 'knex_%' order by tablename`,
      )
    ).rows as { tablename: string }[]
  ).map((row) => row.tablename);
  const parts = [];
  for (const table of tables) {
    const { rows } = await db.raw(
      `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as h from ?? t`,
      [table],
    );
    parts.push(`${table}:${rows[0].n}:${rows[0].h}`);
  }
  return parts.join(',');
}

export const sqlish = fc.constantFrom(
  "' OR 1=1 --",
  "'); DROP TABLE carts; --",
  '"; SELECT pg_sleep(5); --',
  '\u0000',
  '%00',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
);
export const pollution = fc.constantFrom('__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty');
export const hostileString = fc.oneof(
  sqlish,
  fc.string({ maxLength: 40 }),
  fc.string({ minLength: 1000, maxLength: 20_000 }),
  fc.string({ unit: 'grapheme', maxLength: 30 }),
);

/** Any JSON value, with hostile strings and prototype-polluting keys; `keys` are field names the endpoint knows. */
export function hostileValueWith(keys: string[]): fc.Arbitrary<unknown> {
  return fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      hostileString,
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(fc.oneof(pollution, fc.string({ maxLength: 12 }), fc.constantFrom(...keys)), tie('value'), {
        maxKeys: 5,
      }),
    ),
  })).value;
}

export const hostileValue = hostileValueWith([
  'items',
  'id',
  'quantity',
  'promo_codes',
  'scope',
  'grant_types',
  'region_id',
]);
const itemsLike = fc.record(
  {
    items: fc.oneof(
      hostileValue,
      fc.array(
        fc.dictionary(
          fc.oneof(pollution, fc.constantFrom('id', 'variant_id', 'handle', 'sku', 'quantity')),
          hostileValue,
          { maxKeys: 4 },
        ),
        { maxLength: 5 },
      ),
    ),
  },
  { requiredKeys: [] },
);
const deepNesting = fc
  .integer({ min: 33, max: 3_000 })
  .map((depth) => '{"items":' + '['.repeat(depth) + ']'.repeat(depth) + '}');
const invalidUtf8 = fc
  .uint8Array({ minLength: 1, maxLength: 64 })
  .map((bytes) =>
    Buffer.concat([
      Buffer.from('{"items":[{"id":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(bytes),
      Buffer.from('"}]}'),
    ]),
  );

/** A request body: hostile JSON, near-valid shapes (`shaped`, default an items-like object), deep nesting, bad UTF-8, non-JSON. */
export function hostileBodyWith(shaped: fc.Arbitrary<unknown> = itemsLike): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    hostileValue.map((value) => JSON.stringify(value) ?? 'null'),
    shaped.map((value) => JSON.stringify(value) ?? 'null'),
    deepNesting,
    invalidUtf8,
    hostileString,
    fc.constant(''),
  );
}

export const hostileBody = hostileBodyWith();
export const hostileContentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  undefined,
);

/** Never a 5xx, and always JSON (or the HTML pay page) when there is a body. */
export async function expectHarmless(response: Response): Promise<void> {
  expect(response.status).toBeLessThan(500);
  const type = response.headers.get('content-type') ?? '';
  if (response.status !== 304) expect(type).toMatch(/json|html/);
}
