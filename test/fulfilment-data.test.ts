// The destination tax and shipping data (migration 010, the seed) read back through the fulfilment repository, on
// whichever storage the run uses (PGlite, or PostgreSQL with DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shippableSubdivisions } from '../src/domain/destination.js';
import { createDatabase, prepareDatabase, type Db } from '../src/db/knex.js';
import { migrationSource } from '../src/db/migrations/index.js';
import { loadFulfilmentTerms } from '../src/db/repositories/fulfilment.js';
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
  await prepareDatabase(db);
});

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

const today = new Date('2026-11-27T12:00:00Z');
const terms = (regionId: string, country: string, subdivision: string | null, at = today) =>
  loadFulfilmentTerms(db, { regionId, country, subdivision, at });

const standard = (amount: number, freeShippingThreshold: number, min: number, max: number) => ({
  code: 'standard',
  title: 'Standard shipping',
  description: `Tracked delivery in ${min}–${max} business days.`,
  amount,
  freeShippingThreshold,
  minBusinessDays: min,
  maxBusinessDays: max,
});

describe('fulfilment terms', () => {
  it('reads Germany: 19 % VAT on goods and shipping, tax-inclusive prices, Standard and Express in euros', async () => {
    expect(await terms('reg_eu', 'de', null)).toEqual({
      regionId: 'reg_eu',
      currencyCode: 'eur',
      pricesIncludeTax: true,
      taxRates: [{ jurisdiction: 'DE', taxCode: 'VAT', name: 'VAT (DE)', rate: 19_000, shippingTaxable: true }],
      shippingOptions: [
        standard(495, 3000, 3, 6),
        {
          code: 'express',
          title: 'Express shipping',
          description: 'Priority tracked delivery in 1–3 business days.',
          amount: 1495,
          freeShippingThreshold: null,
          minBusinessDays: 1,
          maxBusinessDays: 3,
        },
      ],
    });
  });

  it('reads Oregon as no sales tax and California as 7.25 % with shipping exempt, prices excluding tax', async () => {
    const oregon = await terms('reg_us', 'US', 'US-OR');
    expect(oregon).toMatchObject({ currencyCode: 'usd', pricesIncludeTax: false });
    expect(oregon!.taxRates).toEqual([
      { jurisdiction: 'US-OR', taxCode: 'SALES_TAX', name: 'Oregon sales tax', rate: 0, shippingTaxable: false },
    ]);
    expect(oregon!.shippingOptions.map((option) => [option.code, option.amount])).toEqual([
      ['standard', 495],
      ['express', 1495],
    ]);
    expect((await terms('reg_us', 'US', 'us-ca'))!.taxRates).toEqual([
      { jurisdiction: 'US-CA', taxCode: 'SALES_TAX', name: 'California sales tax', rate: 7250, shippingTaxable: false },
    ]);
  });

  it('reads Quebec as two jurisdictions, federal GST first, then QST at 9.975 %', async () => {
    expect((await terms('reg_ca', 'CA', 'CA-QC'))!.taxRates).toEqual([
      { jurisdiction: 'CA', taxCode: 'GST', name: 'GST', rate: 5000, shippingTaxable: true },
      { jurisdiction: 'CA-QC', taxCode: 'QST', name: 'QST', rate: 9975, shippingTaxable: true },
    ]);
    expect((await terms('reg_ca', 'CA', 'CA-AB'))!.taxRates.map((rate) => [rate.taxCode, rate.rate])).toEqual([
      ['GST', 5000],
    ]);
    expect((await terms('reg_ca', 'CA', 'CA-ON'))!.taxRates.map((rate) => [rate.taxCode, rate.rate])).toEqual([
      ['HST', 13_000],
    ]);
  });

  it("reads the rate in force on the day: Nova Scotia's HST 15 % until 2025-03-31, 14 % from 2025-04-01", async () => {
    const on = async (day: string) =>
      (await terms('reg_ca', 'CA', 'CA-NS', new Date(`${day}T12:00:00Z`)))!.taxRates.map((rate) => rate.rate);
    expect(await on('2025-03-31')).toEqual([15_000]);
    expect(await on('2025-04-01')).toEqual([14_000]);
    expect(await on('2026-11-27')).toEqual([14_000]);
  });

  it("reads the District of Columbia's 6 % until 2026-09-30 and 7 % from 2026-10-01", async () => {
    const on = async (day: string) =>
      (await terms('reg_us', 'US', 'US-DC', new Date(`${day}T12:00:00Z`)))!.taxRates.map((rate) => rate.rate);
    expect(await on('2026-09-30')).toEqual([6000]);
    expect(await on('2026-10-01')).toEqual([7000]);
  });

  it('reads nothing for a country the region does not ship to', async () => {
    expect(await terms('reg_eu', 'US', 'US-CA')).toBeUndefined();
    expect(await terms('reg_eu', 'AT', null)).toBeUndefined();
    expect(await terms('reg_nowhere', 'DE', null)).toBeUndefined();
  });

  it('has a tax rate for every subdivision shipped to in the US and Canada, and every other country shipped to', async () => {
    const missing: string[] = [];
    for (const [regionId, country] of [
      ['reg_us', 'US'],
      ['reg_ca', 'CA'],
    ] as const)
      for (const subdivision of shippableSubdivisions(country))
        if ((await terms(regionId, country, subdivision))!.taxRates.length === 0) missing.push(subdivision);
    const countries = (await db('region_countries').select('region_id', 'iso_2')) as Array<{
      region_id: string;
      iso_2: string;
    }>;
    for (const { region_id, iso_2 } of countries)
      if (!['us', 'ca'].includes(iso_2) && (await terms(region_id, iso_2, null))!.taxRates.length !== 1)
        missing.push(iso_2);
    expect(missing).toEqual([]);
    expect(shippableSubdivisions('US')).toHaveLength(51);
    expect(shippableSubdivisions('CA')).toHaveLength(13);
  });

  it('marks the EU, UK and Japan tax-inclusive, the US and Canada not', async () => {
    expect(await db('regions').select('id', 'prices_include_tax').orderBy('rank')).toEqual([
      { id: 'reg_us', prices_include_tax: false },
      { id: 'reg_eu', prices_include_tax: true },
      { id: 'reg_gb', prices_include_tax: true },
      { id: 'reg_ca', prices_include_tax: false },
      { id: 'reg_jp', prices_include_tax: true },
    ]);
  });

  it('counts a change to the rates or the shipping options as a new catalogue version, truncation included', async () => {
    const version = async (run: Db = db) => Number((await run('catalog_version').first()).version);
    const changes = {
      tax_rates: () =>
        db('tax_rates')
          .where({ id: 'txr_de_vat' })
          .update({ rate: db.raw('rate') }),
      shipping_options: () =>
        db('shipping_options')
          .where({ region_id: 'reg_eu', code: 'express' })
          .update({ amount: db.raw('amount') }),
    };
    for (const [table, change] of Object.entries(changes)) {
      const before = await version();
      await change();
      expect({ table, changed: (await version()) > before }).toEqual({ table, changed: true });
      const trx = await db.transaction();
      let truncated: number;
      try {
        await trx.raw(`truncate ${table}`);
        truncated = Number((await trx('catalog_version').first()).version);
      } finally {
        await trx.rollback();
      }
      expect({ table, truncatedChanged: truncated > before + 1 }).toEqual({ table, truncatedChanged: true });
    }
  });

  it('seeds once however often the service starts, and marks a database seeded before migration 010', async () => {
    const counts = async () => ({
      tax_rates: Number((await db('tax_rates').count({ n: '*' }))[0]!.n),
      shipping_options: Number((await db('shipping_options').count({ n: '*' }))[0]!.n),
    });
    expect(await counts()).toEqual({ tax_rates: 51 + 1 + 18 + 8, shipping_options: 10 });
    await prepareDatabase(db);
    expect(await counts()).toEqual({ tax_rates: 78, shipping_options: 10 });

    // Undone (with every later migration) and done again on the seeded database: the seed adds nothing to regions it
    // already holds, so the migration itself marks the tax-inclusive ones.
    while (await db.schema.hasColumn('regions', 'prices_include_tax')) await db.migrate.down({ migrationSource });
    expect(await db.schema.hasColumn('regions', 'prices_include_tax')).toBe(false);
    await db.migrate.latest({ migrationSource });
    expect(await db('regions').where({ prices_include_tax: true }).orderBy('rank').pluck('id')).toEqual([
      'reg_eu',
      'reg_gb',
      'reg_jp',
    ]);
    expect(await counts()).toEqual({ tax_rates: 0, shipping_options: 0 });
    await prepareDatabase(db);
    expect(await counts()).toEqual({ tax_rates: 78, shipping_options: 10 });
  });
});
