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
import { DESTINATION_TABLE as TABLE } from '../support/destinations.js';

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
