// Generators of hostile input and the checks every hostile-input property shares: garbage bodies and content types,
// a fingerprint of all stored rows (a failed request must leave it unchanged), and what a harmless answer looks like.
import fc from 'fast-check';
import type { Knex } from 'knex';
import { expect } from 'vitest';

const tablesOf = new WeakMap<Knex, Promise<string[]>>();

/** Row count and content hash of every table but `except`, in one statement: any change to stored data changes it. */
export async function fingerprint(db: Knex, except: string[] = []): Promise<string> {
  let tables = tablesOf.get(db);
  if (!tables) {
    tables = db
      .raw(
        `select tablename from pg_tables where schemaname = current_schema() and tablename not like 'knex_%' order by tablename`,
      )
      .then((result: { rows: { tablename: string }[] }) => result.rows.map((row) => row.tablename));
    tablesOf.set(db, tables);
  }
  const counted = (await tables).filter((table) => !except.includes(table));
  const { rows } = await db.raw(
    counted
      .map(
        () =>
          `select ?::text as t, count(*)::int as n, md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from ?? x`,
      )
      .join(' union all '),
    counted.flatMap((table) => [table, table]),
  );
  return (rows as { t: string; n: number; h: string }[]).map((row) => `${row.t}:${row.n}:${row.h}`).join(',');
}

/**
 * Runs requests one after another and checks that each one that fails (status ≥ 400) leaves the stored data as it
 * found it. The fingerprint taken after one request is the one before the next, so a run of failures costs one
 * fingerprint each; `except` names tables a failure may write to by design.
 */
export function storedDataGuard(db: Knex, except: string[] = []) {
  let known: string | undefined;
  return async (request: () => Promise<Response>): Promise<Response> => {
    const before = known ?? (await fingerprint(db, except));
    known = undefined;
    const response = await request();
    if (response.status >= 400) {
      const after = await fingerprint(db, except);
      expect(after, `${response.status} changed stored data`).toBe(before);
      known = after;
    }
    return response;
  };
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
/** Strings PostgreSQL cannot store: NUL and unpaired UTF-16 surrogates (JSON carries them as \\u escapes). */
export const unstorableString = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udc00y',
  '\udfff\ud800',
  '10OFF\u0000',
);
export const hostileString = fc.oneof(
  sqlish,
  unstorableString,
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

/** Printable ASCII only: what a header value may carry (fetch refuses control characters and non-Latin-1 text). */
export const hostileHeaderValue = fc
  .oneof(fc.string({ maxLength: 40 }), fc.string({ minLength: 200, maxLength: 4_000 }), sqlish)
  .map((text) => text.replace(/[^\x20-\x7e]/g, ''));

/** More than the 100 kB every JSON body may have. */
export const oversizedBody = fc
  .integer({ min: 100 * 1024 + 1, max: 300 * 1024 })
  .map((size) => JSON.stringify({ line_items: [], padding: 'x'.repeat(size) }));

/** A request body: hostile JSON, near-valid shapes (`shaped`, default an items-like object), deep nesting, bad UTF-8, non-JSON. */
export function hostileBodyWith(shaped: fc.Arbitrary<unknown> = itemsLike): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    hostileValue.map((value) => JSON.stringify(value) ?? 'null'),
    shaped.map((value) => JSON.stringify(value) ?? 'null'),
    deepNesting,
    invalidUtf8,
    oversizedBody,
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
  if ((await response.clone().text()) !== '') expect(type).toMatch(/json|html/);
}
