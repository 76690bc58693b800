// Pricing with a destination (priceQuote): a table of destinations across every region priced to the minor unit
// against the seeded rates and shipping options, and properties over generated carts, rates and options.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promotionArb } from '../support/arbitraries.js';
import { RATE_SCALE, type FulfilmentTerms, type ShippingOption, type TaxRate } from '../../src/domain/fulfilment.js';
import {
  priceCart,
  priceQuote,
  type DestinationQuote,
  type LineToPrice,
  type RegionTerms,
} from '../../src/domain/pricing.js';
import type { AppliedPromotion } from '../../src/domain/promotions.js';
import { regions, shippingOptions, taxRates } from '../../src/db/seed.js';

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';
/** Catalogue amounts (seed.ts), tax excluded. */
const CATALOGUE: Record<string, Record<string, number>> = {
  reg_us: { [TWO_PACK]: 1299, [TRAVEL]: 1999 },
  reg_eu: { [TWO_PACK]: 1199, [TRAVEL]: 1899 },
  reg_gb: { [TWO_PACK]: 1099, [TRAVEL]: 1699 },
  reg_ca: { [TWO_PACK]: 1699, [TRAVEL]: 2599 },
  reg_jp: { [TWO_PACK]: 1900, [TRAVEL]: 2900 },
};
const REGION_OF: Record<string, string> = { US: 'reg_us', CA: 'reg_ca', GB: 'reg_gb', JP: 'reg_jp' };
const tenOff: AppliedPromotion = { code: '10OFF', kind: 'percentage', value: 1000 };
const TODAY = '2026-11-27';

function regionTerms(regionId: string): RegionTerms {
  const region = regions.find((row) => row.id === regionId)!;
  return {
    currencyCode: region.currency_code,
    taxRateBps: region.tax_rate_bps,
    shippingAmount: region.shipping_amount,
    freeShippingThreshold: region.free_shipping_threshold,
  };
}

/** The seeded terms for a destination, picked as the repository's statement picks them (test/fulfilment-data checks it). */
function seededTerms(destination: string): FulfilmentTerms {
  const [country, state] = destination.split('-') as [string, string | undefined];
  const subdivision = state ? destination : null;
  const regionId = REGION_OF[country] ?? 'reg_eu';
  const region = regions.find((row) => row.id === regionId)!;
  const inForce = taxRates
    .filter((row) => row.country === country && (row.subdivision === null || row.subdivision === subdivision))
    .filter((row) => row.valid_from <= TODAY)
    .filter(
      (row, _, all) =>
        !all.some(
          (other) =>
            other.subdivision === row.subdivision &&
            other.tax_code === row.tax_code &&
            other.valid_from > row.valid_from,
        ),
    )
    .sort((a, b) => Number(a.jurisdiction !== a.country) - Number(b.jurisdiction !== b.country));
  return {
    regionId,
    currencyCode: region.currency_code,
    pricesIncludeTax: region.prices_include_tax,
    taxRates: inForce.map((row) => ({
      jurisdiction: row.jurisdiction,
      taxCode: row.tax_code as TaxRate['taxCode'],
      name: row.name,
      rate: row.rate,
      shippingTaxable: row.shipping_taxable,
    })),
    shippingOptions: shippingOptions
      .filter((row) => row.region_id === regionId)
      .map((row) => ({
        code: row.code as ShippingOption['code'],
        title: row.title,
        description: row.description,
        amount: row.amount,
        freeShippingThreshold: row.free_shipping_threshold,
        minBusinessDays: row.min_business_days,
        maxBusinessDays: row.max_business_days,
      })),
  };
}

function quoteFor(destination: string, option: string, items: 1 | 2, promotion: AppliedPromotion | null) {
  const terms = seededTerms(destination);
  const prices = CATALOGUE[terms.regionId]!;
  const lines: LineToPrice[] = [TWO_PACK, TRAVEL]
    .slice(0, items)
    .map((variantId) => ({ variantId, title: variantId, quantity: 1, unitAmount: prices[variantId]! }));
  const shippingOption = terms.shippingOptions.find((candidate) => candidate.code === option)!;
  return priceQuote(lines, regionTerms(terms.regionId), promotion, { terms, shippingOption }) as DestinationQuote;
}

// Each row: destination, shipping option, items (1: one 2-pack; 2: one 2-pack and one travel set), 10OFF or not, then
// the expected subtotal, discount, shipping, tax by jurisdiction (federal first) and total, in minor units.
// Worked out apart from the code under test, by these rules (docs/fulfilment-and-tax.md):
//  - US and Canada: tax added on top, per line per jurisdiction, half up. CA-QC, 2-pack + travel set, 10OFF: subtotal
//    16.99 + 25.99 = 42.98; discount 10 % = 4.298 → 4.30, split by base (1.6997 → 1.69, 2.6002 → 2.60, the cent left
//    to the heavier line: 2.61), lines 15.30 and 23.38; GST 5 % 0.765 → 0.77 and 1.169 → 1.17 (1.94), QST 9.975 %
//    1.526175 → 1.53 and 2.332155 → 2.33 (3.86); shipping free (38.68 ≥ 35.00); total 38.68 + 1.94 + 3.86 = 44.48.
//  - EU, UK, Japan: shelf price = catalogue + the region rate, rounded once per unit (EU 11.99 + 21 % = 14.5079 →
//    14.51; travel 18.99 → 22.9779 → 22.98; UK 10.99 → 13.19, 16.99 → 20.39; JP ¥1900 → ¥2090, ¥2900 → ¥3190), tax
//    extracted: DE one 2-pack = 14.51 × 19/119 = 2.3168 → 2.32, Standard shipping 4.95 × 19/119 = 0.7903 → 0.79:
//    tax 3.11 in a total of 14.51 + 4.95 = 19.46.
//  - Shipping: Standard free once goods after discount reach the threshold (JP 2 items with 10OFF: ¥5280 − ¥528 =
//    ¥4752 < ¥5000: ¥600 is charged); Express never free.
const TABLE: Array<[string, 'standard' | 'express', 1 | 2, boolean, number, number, number, number[], number]> = [
  ['US-OR', 'standard', 1, false, 1299, 0, 495, [0], 1794],
  ['US-OR', 'standard', 1, true, 1299, 130, 495, [0], 1664],
  ['US-OR', 'standard', 2, false, 3298, 0, 0, [0], 3298],
  ['US-OR', 'standard', 2, true, 3298, 330, 0, [0], 2968],
  ['US-CA', 'standard', 1, false, 1299, 0, 495, [94], 1888],
  ['US-CA', 'standard', 1, true, 1299, 130, 495, [85], 1749],
  ['US-CA', 'standard', 2, false, 3298, 0, 0, [239], 3537],
  ['US-CA', 'standard', 2, true, 3298, 330, 0, [215], 3183],
  ['US-CA', 'express', 1, false, 1299, 0, 1495, [94], 2888],
  ['US-CA', 'express', 1, true, 1299, 130, 1495, [85], 2749],
  ['US-CA', 'express', 2, false, 3298, 0, 1495, [239], 5032],
  ['US-CA', 'express', 2, true, 3298, 330, 1495, [215], 4678],
  ['US-NY', 'standard', 1, false, 1299, 0, 495, [72], 1866],
  ['US-NY', 'standard', 1, true, 1299, 130, 495, [67], 1731],
  ['US-NY', 'standard', 2, false, 3298, 0, 0, [132], 3430],
  ['US-NY', 'standard', 2, true, 3298, 330, 0, [119], 3087],
  ['US-TX', 'standard', 1, false, 1299, 0, 495, [112], 1906],
  ['US-TX', 'standard', 1, true, 1299, 130, 495, [104], 1768],
  ['US-TX', 'standard', 2, false, 3298, 0, 0, [206], 3504],
  ['US-TX', 'standard', 2, true, 3298, 330, 0, [185], 3153],
  ['US-WA', 'standard', 1, false, 1299, 0, 495, [116], 1910],
  ['US-WA', 'standard', 1, true, 1299, 130, 495, [108], 1772],
  ['US-WA', 'standard', 2, false, 3298, 0, 0, [214], 3512],
  ['US-WA', 'standard', 2, true, 3298, 330, 0, [193], 3161],
  ['US-NJ', 'standard', 1, false, 1299, 0, 495, [119], 1913],
  ['US-NJ', 'standard', 1, true, 1299, 130, 495, [110], 1774],
  ['US-NJ', 'standard', 2, false, 3298, 0, 0, [218], 3516],
  ['US-NJ', 'standard', 2, true, 3298, 330, 0, [197], 3165],
  ['US-MN', 'standard', 1, false, 1299, 0, 495, [123], 1917],
  ['US-MN', 'standard', 1, true, 1299, 130, 495, [114], 1778],
  ['US-MN', 'standard', 2, false, 3298, 0, 0, [226], 3524],
  ['US-MN', 'standard', 2, true, 3298, 330, 0, [204], 3172],
  ['DE', 'standard', 1, false, 1451, 0, 495, [311], 1946],
  ['DE', 'standard', 1, true, 1451, 145, 495, [288], 1801],
  ['DE', 'standard', 2, false, 3749, 0, 0, [599], 3749],
  ['DE', 'standard', 2, true, 3749, 375, 0, [539], 3374],
  ['DE', 'express', 1, false, 1451, 0, 1495, [471], 2946],
  ['DE', 'express', 1, true, 1451, 145, 1495, [448], 2801],
  ['DE', 'express', 2, false, 3749, 0, 1495, [838], 5244],
  ['DE', 'express', 2, true, 3749, 375, 1495, [778], 4869],
  ['FR', 'standard', 1, false, 1451, 0, 495, [325], 1946],
  ['FR', 'standard', 1, true, 1451, 145, 495, [301], 1801],
  ['FR', 'standard', 2, false, 3749, 0, 0, [625], 3749],
  ['FR', 'standard', 2, true, 3749, 375, 0, [563], 3374],
  ['IE', 'standard', 1, false, 1451, 0, 495, [364], 1946],
  ['IE', 'standard', 1, true, 1451, 145, 495, [337], 1801],
  ['IE', 'standard', 2, false, 3749, 0, 0, [701], 3749],
  ['IE', 'standard', 2, true, 3749, 375, 0, [631], 3374],
  ['ES', 'standard', 1, false, 1451, 0, 495, [338], 1946],
  ['ES', 'standard', 1, true, 1451, 145, 495, [313], 1801],
  ['ES', 'standard', 2, false, 3749, 0, 0, [651], 3749],
  ['ES', 'standard', 2, true, 3749, 375, 0, [586], 3374],
  ['IT', 'standard', 1, false, 1451, 0, 495, [351], 1946],
  ['IT', 'standard', 1, true, 1451, 145, 495, [325], 1801],
  ['IT', 'standard', 2, false, 3749, 0, 0, [676], 3749],
  ['IT', 'standard', 2, true, 3749, 375, 0, [609], 3374],
  ['NL', 'standard', 1, false, 1451, 0, 495, [338], 1946],
  ['NL', 'standard', 1, true, 1451, 145, 495, [313], 1801],
  ['NL', 'standard', 2, false, 3749, 0, 0, [651], 3749],
  ['NL', 'standard', 2, true, 3749, 375, 0, [586], 3374],
  ['GB', 'standard', 1, false, 1319, 0, 395, [286], 1714],
  ['GB', 'standard', 1, true, 1319, 132, 395, [264], 1582],
  ['GB', 'standard', 2, false, 3358, 0, 0, [560], 3358],
  ['GB', 'standard', 2, true, 3358, 336, 0, [504], 3022],
  ['GB', 'express', 1, false, 1319, 0, 995, [386], 2314],
  ['GB', 'express', 1, true, 1319, 132, 995, [364], 2182],
  ['GB', 'express', 2, false, 3358, 0, 995, [726], 4353],
  ['GB', 'express', 2, true, 3358, 336, 995, [670], 4017],
  ['CA-ON', 'standard', 1, false, 1699, 0, 695, [311], 2705],
  ['CA-ON', 'standard', 1, true, 1699, 170, 695, [289], 2513],
  ['CA-ON', 'standard', 2, false, 4298, 0, 0, [559], 4857],
  ['CA-ON', 'standard', 2, true, 4298, 430, 0, [503], 4371],
  ['CA-AB', 'standard', 1, false, 1699, 0, 695, [120], 2514],
  ['CA-AB', 'standard', 1, true, 1699, 170, 695, [111], 2335],
  ['CA-AB', 'standard', 2, false, 4298, 0, 0, [215], 4513],
  ['CA-AB', 'standard', 2, true, 4298, 430, 0, [194], 4062],
  ['CA-QC', 'standard', 1, false, 1699, 0, 695, [120, 238], 2752],
  ['CA-QC', 'standard', 1, true, 1699, 170, 695, [111, 222], 2557],
  ['CA-QC', 'standard', 2, false, 4298, 0, 0, [215, 428], 4941],
  ['CA-QC', 'standard', 2, true, 4298, 430, 0, [194, 386], 4448],
  ['CA-QC', 'express', 1, false, 1699, 0, 1995, [185, 368], 4247],
  ['CA-QC', 'express', 1, true, 1699, 170, 1995, [176, 352], 4052],
  ['CA-QC', 'express', 2, false, 4298, 0, 1995, [315, 627], 7235],
  ['CA-QC', 'express', 2, true, 4298, 430, 1995, [294, 585], 6742],
  ['CA-BC', 'standard', 1, false, 1699, 0, 695, [120, 168], 2682],
  ['CA-BC', 'standard', 1, true, 1699, 170, 695, [111, 156], 2491],
  ['CA-BC', 'standard', 2, false, 4298, 0, 0, [215, 301], 4814],
  ['CA-BC', 'standard', 2, true, 4298, 430, 0, [194, 271], 4333],
  ['CA-NS', 'standard', 1, false, 1699, 0, 695, [335], 2729],
  ['CA-NS', 'standard', 1, true, 1699, 170, 695, [311], 2535],
  ['CA-NS', 'standard', 2, false, 4298, 0, 0, [602], 4900],
  ['CA-NS', 'standard', 2, true, 4298, 430, 0, [541], 4409],
  ['CA-SK', 'standard', 1, false, 1699, 0, 695, [120, 144], 2658],
  ['CA-SK', 'standard', 1, true, 1699, 170, 695, [111, 134], 2469],
  ['CA-SK', 'standard', 2, false, 4298, 0, 0, [215, 258], 4771],
  ['CA-SK', 'standard', 2, true, 4298, 430, 0, [194, 232], 4294],
  ['JP', 'standard', 1, false, 2090, 0, 600, [245], 2690],
  ['JP', 'standard', 1, true, 2090, 209, 600, [226], 2481],
  ['JP', 'standard', 2, false, 5280, 0, 0, [480], 5280],
  ['JP', 'standard', 2, true, 5280, 528, 600, [487], 5352],
  ['JP', 'express', 1, false, 2090, 0, 1200, [299], 3290],
  ['JP', 'express', 1, true, 2090, 209, 1200, [280], 3081],
  ['JP', 'express', 2, false, 5280, 0, 1200, [589], 6480],
  ['JP', 'express', 2, true, 5280, 528, 1200, [541], 5952],
];

describe('priceQuote: destinations priced to the minor unit', () => {
  it('covers at least 20 destinations across every region', () => {
    const destinations = new Set(TABLE.map(([destination]) => destination));
    expect(destinations.size).toBeGreaterThanOrEqual(20);
    expect(new Set([...destinations].map((destination) => seededTerms(destination).regionId))).toEqual(
      new Set(['reg_us', 'reg_eu', 'reg_gb', 'reg_ca', 'reg_jp']),
    );
  });

  it.each(TABLE)(
    '%s, %s shipping, %i item(s), 10OFF %s',
    (destination, option, items, promo, subtotal, discount, shipping, taxes, total) => {
      const quote = quoteFor(destination, option, items, promo ? tenOff : null);
      expect({
        subtotal: quote.totals.subtotal,
        discount: quote.totals.discount,
        shipping: quote.totals.shipping,
        taxes: quote.taxes.map((tax) => tax.amount),
        tax: quote.totals.tax,
        total: quote.totals.total,
      }).toEqual({ subtotal, discount, shipping, taxes, tax: taxes.reduce((sum, tax) => sum + tax, 0), total });
    },
  );

  it('quotes Germany with Express: 19 % VAT included in the shelf prices and the Express price, by line and shipping', () => {
    const quote = quoteFor('DE', 'express', 2, null);
    expect(quote).toMatchObject({ estimate: false, currencyCode: 'eur', taxIncluded: true });
    expect(quote.lines.map((line) => [line.shelfUnitAmount, line.subtotal, line.tax, line.net, line.total])).toEqual([
      [1451, 1451, 232, 1219, 1451], // 14.51 × 19/119 = 2.3168
      [2298, 2298, 367, 1931, 2298], // 22.98 × 19/119 = 3.6692
    ]);
    expect(quote.shipping).toMatchObject({ amount: 1495, tax: 239, option: { code: 'express' } }); // 14.95 × 19/119
    expect(quote.taxes).toEqual([
      { jurisdiction: 'DE', taxCode: 'VAT', name: 'VAT (DE)', rate: 19_000, taxableAmount: 5244, amount: 838 },
    ]);
    expect(quote.totals).toEqual({ subtotal: 3749, discount: 0, shipping: 1495, tax: 838, total: 5244 });
  });

  it('lists Quebec GST and QST as two jurisdictions on every line and on shipping', () => {
    const quote = quoteFor('CA-QC', 'express', 1, null);
    expect(quote.lines[0]!.taxes).toEqual([
      { jurisdiction: 'CA', taxCode: 'GST', amount: 85 }, // 16.99 × 5 % = 0.8495
      { jurisdiction: 'CA-QC', taxCode: 'QST', amount: 169 }, // 16.99 × 9.975 % = 1.6947525
    ]);
    expect(quote.shipping.taxes).toEqual([
      { jurisdiction: 'CA', taxCode: 'GST', amount: 100 }, // 19.95 × 5 % = 0.9975
      { jurisdiction: 'CA-QC', taxCode: 'QST', amount: 199 }, // 19.95 × 9.975 % = 1.9900125
    ]);
    expect(quote.taxes.map((tax) => [tax.name, tax.taxableAmount, tax.amount])).toEqual([
      ['GST', 3694, 185],
      ['QST', 3694, 368],
    ]);
  });

  it('leaves shipping untaxed where the state exempts it (California) and taxes it where not (New York)', () => {
    expect(quoteFor('US-CA', 'standard', 1, null).shipping).toMatchObject({ amount: 495, tax: 0, taxes: [] });
    expect(quoteFor('US-NY', 'standard', 1, null).shipping).toMatchObject({ amount: 495, tax: 20 }); // 4.95 × 4 %
  });

  it('prices a session without a destination exactly as priceCart, marked as an estimate', () => {
    const lines: LineToPrice[] = [{ variantId: TWO_PACK, title: 't', quantity: 2, unitAmount: 1199 }];
    const eu = regionTerms('reg_eu');
    expect(priceQuote(lines, eu, tenOff, null)).toEqual({
      ...priceCart(lines, eu, tenOff),
      estimate: true,
      taxIncluded: false,
    });
  });
});

// Generated carts, rates and options: the invariants every destination quote keeps.
const lineArb = fc.record({
  variantId: fc.string({ minLength: 1, maxLength: 8 }),
  title: fc.constant('t'),
  quantity: fc.integer({ min: 1, max: 100 }),
  unitAmount: fc.integer({ min: 1, max: 500_000 }),
});
const regionArb = fc.record({
  currencyCode: fc.constantFrom('usd', 'eur', 'gbp', 'cad', 'jpy', 'kwd'),
  taxRateBps: fc.integer({ min: 0, max: 3000 }),
  shippingAmount: fc.integer({ min: 0, max: 5000 }),
  freeShippingThreshold: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: null }),
});
const taxRateArb = (index: number) =>
  fc.record({
    jurisdiction: fc.constant(`J${index}`),
    taxCode: fc.constantFrom('SALES_TAX', 'VAT', 'GST', 'HST', 'PST', 'QST', 'CONSUMPTION_TAX' as const),
    name: fc.constant(`tax ${index}`),
    rate: fc.integer({ min: 0, max: 30_000 }),
    shippingTaxable: fc.boolean(),
  });
const ratesArb = fc
  .integer({ min: 0, max: 3 })
  .chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => taxRateArb(index))));
const optionArb = fc.record({
  code: fc.constantFrom('standard' as const, 'express' as const),
  title: fc.constant('o'),
  description: fc.constant('o'),
  amount: fc.integer({ min: 0, max: 5000 }),
  freeShippingThreshold: fc.option(fc.integer({ min: 0, max: 100_000 }), { nil: null }),
  minBusinessDays: fc.constant(1),
  maxBusinessDays: fc.constant(3),
});
const quoteArb = fc
  .record({
    lines: fc.array(lineArb, { maxLength: 6 }),
    region: regionArb,
    promotion: promotionArb,
    rates: ratesArb,
    option: optionArb,
    included: fc.boolean(),
  })
  .map(({ lines, region, promotion, rates, option, included }) => {
    const terms: FulfilmentTerms = {
      regionId: 'r',
      currencyCode: region.currencyCode,
      pricesIncludeTax: included,
      taxRates: rates,
      shippingOptions: [option],
    };
    return {
      lines,
      region,
      promotion,
      terms,
      quote: priceQuote(lines, region, promotion, { terms, shippingOption: option }) as DestinationQuote,
    };
  });

const sum = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);

describe('priceQuote: properties', () => {
  it('adds up: lines to totals, jurisdictions to tax, and the total by the mode', () => {
    fc.assert(
      fc.property(quoteArb, ({ quote }) => {
        const { totals, lines, shipping, taxes, taxIncluded } = quote;
        expect(sum(lines.map((line) => line.baseAmount))).toBe(totals.subtotal);
        expect(sum(lines.map((line) => line.discount))).toBe(totals.discount);
        expect(sum(lines.map((line) => line.tax)) + shipping.tax).toBe(totals.tax);
        expect(sum(taxes.map((tax) => tax.amount))).toBe(totals.tax);
        expect(shipping.amount).toBe(totals.shipping);
        expect(totals.total).toBe(totals.subtotal - totals.discount + totals.shipping + (taxIncluded ? 0 : totals.tax));
        for (const line of lines) {
          expect(line.tax).toBe(sum(line.taxes.map((tax) => tax.amount)));
          expect(line.net + line.tax).toBe(line.total);
          expect(taxIncluded ? line.total : line.net).toBe(line.subtotal);
        }
      }),
    );
  });

  it('never charges negative tax, and included tax never exceeds what it is part of', () => {
    fc.assert(
      fc.property(quoteArb, ({ quote }) => {
        for (const line of quote.lines) {
          expect(line.taxes.every((tax) => tax.amount >= 0)).toBe(true);
          expect(line.net).toBeGreaterThanOrEqual(0);
        }
        expect(quote.shipping.taxes.every((tax) => tax.amount >= 0)).toBe(true);
        if (quote.taxIncluded) expect(quote.shipping.tax).toBeLessThanOrEqual(quote.shipping.amount);
        expect(quote.totals.total).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('allocates the discount exactly and never beyond a line', () => {
    fc.assert(
      fc.property(quoteArb, ({ quote }) => {
        expect(quote.totals.discount).toBeLessThanOrEqual(quote.totals.subtotal);
        for (const line of quote.lines) expect(line.subtotal).toBeGreaterThanOrEqual(0);
      }),
    );
  });

  it('taxes shipping only in the jurisdictions whose rule says so', () => {
    fc.assert(
      fc.property(quoteArb, ({ quote, terms }) => {
        const taxing = terms.taxRates.filter((rate) => rate.shippingTaxable).map((rate) => rate.jurisdiction);
        expect(quote.shipping.taxes.map((tax) => tax.jurisdiction)).toEqual(taxing);
      }),
    );
  });

  it('agrees across modes for one jurisdiction: a net amount with its tax added, quoted as tax-inclusive, has the same tax', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 50_000 }),
        fc.constantFrom('usd', 'eur', 'jpy', 'kwd'),
        (net, rate, currencyCode) => {
          const taxRates: TaxRate[] = [{ jurisdiction: 'J', taxCode: 'VAT', name: 'J', rate, shippingTaxable: true }];
          const option: ShippingOption = {
            code: 'standard',
            title: 's',
            description: 's',
            amount: net,
            freeShippingThreshold: null,
            minBusinessDays: 1,
            maxBusinessDays: 2,
          };
          const region = { currencyCode, taxRateBps: 0, shippingAmount: 0, freeShippingThreshold: null };
          const terms = (pricesIncludeTax: boolean): FulfilmentTerms => ({
            regionId: 'r',
            currencyCode,
            pricesIncludeTax,
            taxRates,
            shippingOptions: [option],
          });
          const line = (unitAmount: number) => [{ variantId: 'v', title: 'v', quantity: 1, unitAmount }];
          const exclusive = priceQuote(line(Math.max(net, 1)), region, null, {
            terms: terms(false),
            shippingOption: option,
          }) as DestinationQuote;
          const gross = exclusive.totals.total;
          const inclusive = priceQuote(line(gross - exclusive.shipping.amount - exclusive.shipping.tax), region, null, {
            terms: terms(true),
            shippingOption: { ...option, amount: exclusive.shipping.amount + exclusive.shipping.tax },
          }) as DestinationQuote;
          expect(inclusive.lines[0]!.tax).toBe(exclusive.lines[0]!.tax);
          expect(inclusive.lines[0]!.net).toBe(exclusive.lines[0]!.net);
          expect(inclusive.shipping.tax).toBe(exclusive.shipping.tax);
          expect(inclusive.totals.total).toBe(exclusive.totals.total);
          expect(inclusive.totals.tax).toBe(exclusive.totals.tax);
          expect(RATE_SCALE).toBe(100_000);
        },
      ),
    );
  });

  it('quotes as the estimate does when the destination has the region rate, untaxed shipping and its flat rate', () => {
    fc.assert(
      fc.property(fc.array(lineArb, { maxLength: 6 }), regionArb, promotionArb, (lines, region, promotion) => {
        const shippingOption: ShippingOption = {
          code: 'standard',
          title: 's',
          description: 's',
          amount: region.shippingAmount,
          freeShippingThreshold: region.freeShippingThreshold,
          minBusinessDays: 1,
          maxBusinessDays: 2,
        };
        const terms: FulfilmentTerms = {
          regionId: 'r',
          currencyCode: region.currencyCode,
          pricesIncludeTax: false,
          // 1 basis point = 0.01 % = 10 thousandths of a percent.
          taxRates: [
            { jurisdiction: 'R', taxCode: 'VAT', name: 'R', rate: region.taxRateBps * 10, shippingTaxable: false },
          ],
          shippingOptions: [shippingOption],
        };
        const quote = priceQuote(lines, region, promotion, { terms, shippingOption }) as DestinationQuote;
        const estimate = priceCart(lines, region, promotion);
        expect(quote.totals).toEqual(estimate.totals);
        expect(quote.lines.map((line) => line.tax)).toEqual(estimate.lines.map((line) => line.tax));
      }),
    );
  });
});
