// Property-based checks of the pricing module over many generated carts, plus worked examples.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promotionArb } from '../support/arbitraries.js';
import { currencyOf } from '../../src/domain/money.js';
import { priceCart, type LineToPrice, type RegionTerms } from '../../src/domain/pricing.js';
import type { AppliedPromotion } from '../../src/domain/promotions.js';

const usd: RegionTerms = { currencyCode: 'usd', taxRateBps: 725, shippingAmount: 495, freeShippingThreshold: 2500 };
const line = (variantId: string, unitAmount: number, quantity: number): LineToPrice => ({
  variantId,
  title: variantId,
  unitAmount,
  quantity,
});
const tenOff: AppliedPromotion = { code: '10OFF', kind: 'percentage', value: 1000 };

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

describe('priceCart', () => {
  it('prices the worked example: two 2-packs and one travel set with 10OFF in the US', () => {
    const priced = priceCart([line('a', 1299, 2), line('b', 1999, 1)], usd, tenOff);
    // subtotal 45.97; discount 10% = 4.597 → 4.60, allocated 2.60 / 2.00 by base (25.98 : 19.99)
    expect(priced.totals).toEqual({ subtotal: 4597, discount: 460, shipping: 0, tax: 300, total: 4437 });
    expect(priced.lines.map((l) => [l.baseAmount, l.discount, l.subtotal, l.tax, l.total])).toEqual([
      [2598, 260, 2338, 170, 2508], // tax 7.25% of 23.38 = 1.695 → 1.70
      [1999, 200, 1799, 130, 1929], // tax 7.25% of 17.99 = 1.304 → 1.30
    ]);
  });

  it('charges shipping below the free-shipping threshold, on goods after discount', () => {
    expect(priceCart([line('a', 1299, 1)], usd, null).totals.shipping).toBe(495);
    expect(priceCart([line('a', 2500, 1)], usd, null).totals.shipping).toBe(0);
    expect(priceCart([line('a', 2500, 1)], usd, tenOff).totals.shipping).toBe(495); // 22.50 after discount
  });

  it('prices a cart with no lines at zero: nothing to ship costs nothing', () => {
    expect(priceCart([], usd, tenOff).totals).toEqual({ subtotal: 0, discount: 0, shipping: 0, tax: 0, total: 0 });
  });

  it('caps a fixed discount at the subtotal', () => {
    const priced = priceCart([line('a', 300, 1)], usd, { code: 'F', kind: 'fixed', value: 500 });
    expect(priced.totals).toMatchObject({ subtotal: 300, discount: 300, tax: 0 });
  });

  it('keeps every invariant for any cart, region and promotion', () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 1, maxLength: 12 }),
        regionArb,
        promotionArb,
        (lines, region, promotion) => {
          const { lines: priced, totals } = priceCart(lines, region, promotion);
          const sum = (pick: (l: (typeof priced)[number]) => number) => priced.reduce((acc, l) => acc + pick(l), 0);
          expect(totals.total).toBe(totals.subtotal - totals.discount + totals.shipping + totals.tax);
          expect(sum((l) => l.baseAmount)).toBe(totals.subtotal);
          expect(sum((l) => l.discount)).toBe(totals.discount);
          expect(sum((l) => l.tax)).toBe(totals.tax);
          expect(sum((l) => l.total) + totals.shipping).toBe(totals.total);
          for (const l of priced) {
            expect(l.subtotal).toBe(l.baseAmount - l.discount);
            expect(l.total).toBe(l.subtotal + l.tax);
            expect(l.discount).toBeGreaterThanOrEqual(0);
            expect(l.subtotal).toBeGreaterThanOrEqual(0);
          }
          for (const amount of [
            ...Object.values(totals),
            ...priced.flatMap((l) => [l.baseAmount, l.discount, l.subtotal, l.tax, l.total]),
          ]) {
            expect(Number.isSafeInteger(amount)).toBe(true); // minor units: never a fraction of the currency's smallest unit
          }
          expect(totals.discount).toBeLessThanOrEqual(totals.subtotal);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('rounds the percentage discount once, on the subtotal, whatever the currency exponent', () => {
    fc.assert(
      fc.property(
        fc.array(lineArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('usd', 'jpy', 'kwd'),
        (lines, currencyCode) => {
          const subtotal = lines.reduce((acc, l) => acc + l.unitAmount * l.quantity, 0);
          const { totals } = priceCart(lines, { ...usd, currencyCode }, tenOff);
          expect(Math.abs(totals.discount - subtotal / 10)).toBeLessThanOrEqual(0.5);
          expect(currencyOf(currencyCode).exponent).toBeGreaterThanOrEqual(0);
        },
      ),
    );
  });
});
