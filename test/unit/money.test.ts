import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, dinero, halfUp, multiply, toDecimal, toSnapshot, transformScale } from 'dinero.js';
import { allocateByWeight, applyRate, applyRatio, currencyOf, toMajorUnits } from '../../src/domain/money.js';

/** dinero.js, which the service's integer arithmetic must agree with to the unit. */
const byDinero = {
  money: (amount: number, code: string) => dinero({ amount, currency: currencyOf(code) }),
  toMajorUnits: (amount: number, code: string) => Number(toDecimal(byDinero.money(amount, code))),
  applyRate: (amount: number, basisPoints: number, code: string) =>
    toSnapshot(
      transformScale(
        multiply(byDinero.money(amount, code), { amount: basisPoints, scale: 4 }),
        currencyOf(code).exponent,
        halfUp,
      ),
    ).amount,
  allocate: (amount: number, weights: number[], code: string) =>
    allocate(byDinero.money(amount, code), weights).map((share) => toSnapshot(share).amount),
};
const CURRENCIES = ['usd', 'jpy', 'kwd', 'eur'];

describe('money', () => {
  it('converts minor to major units with the currency exponent', () => {
    expect(toMajorUnits(1299, 'usd')).toBe(12.99);
    expect(toMajorUnits(1900, 'jpy')).toBe(1900);
    expect(toMajorUnits(5, 'eur')).toBe(0.05);
    expect(toMajorUnits(0, 'gbp')).toBe(0);
  });

  it('rejects amounts that are not integer minor units', () => {
    expect(() => toMajorUnits(12.5, 'usd')).toThrow(/integer minor units/);
  });

  it('applies a basis-point rate with one half-up rounding', () => {
    expect(applyRate(1299, 1000, 'usd')).toBe(130); // 129.9 → 130
    expect(applyRate(1250, 1000, 'usd')).toBe(125);
    expect(applyRate(5, 1000, 'usd')).toBe(1); // 0.5 → 1
    expect(applyRate(1299, 725, 'usd')).toBe(94); // 94.1775
    expect(applyRate(1900, 1000, 'jpy')).toBe(190);
  });

  it('gives exactly what dinero.js gives, for any amount, rate, weights and exponent', () => {
    const currency = fc.constantFrom(...CURRENCIES);
    const amount = fc.integer({ min: -10_000_000, max: 10_000_000 });
    fc.assert(
      fc.property(amount, currency, (value, code) => {
        expect(toMajorUnits(value, code)).toBe(byDinero.toMajorUnits(value, code));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      // Rates that make halves (ties) common, and any rate.
      fc.property(
        amount,
        fc.oneof(fc.constantFrom(5000, 2500, 1250, 500, 50), fc.integer({ min: 0, max: 20_000 })),
        currency,
        (value, basisPoints, code) => {
          expect(applyRate(value, basisPoints, code)).toBe(byDinero.applyRate(value, basisPoints, code));
        },
      ),
      { numRuns: 2000 },
    );
    // Small weights make equal weights (ties in who gets the remainder) common.
    const weights = fc.array(fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 100_000 })), {
      minLength: 1,
      maxLength: 20,
    });
    fc.assert(
      fc.property(amount, weights, currency, (value, parts, code) => {
        fc.pre(parts.some((part) => part > 0));
        expect(allocateByWeight(value, parts, code)).toEqual(byDinero.allocate(value, parts, code));
      }),
      { numRuns: 2000 },
    );
  });

  it('allocates exactly, in proportion, for any weights', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 20 }),
        (amount, weights) => {
          const parts = allocateByWeight(amount, weights, 'usd');
          expect(parts.reduce((sum, part) => sum + part, 0)).toBe(amount);
          expect(parts.every((part) => Number.isInteger(part) && part >= 0)).toBe(true);
          const total = weights.reduce((sum, weight) => sum + weight, 0);
          if (total > 0)
            parts.forEach((part, index) =>
              expect(Math.abs(part - (amount * weights[index]!) / total)).toBeLessThan(1 + 1e-9),
            );
        },
      ),
    );
  });

  it('applies a ratio rounded half up, as applyRate for basis points and exactly beyond 2^53', () => {
    /** The exact rational rounded half up, for amounts ≥ 0: ⌊(2·a·n + d) / 2d⌋, in BigInt arithmetic. */
    const exact = (amount: number, numerator: number, denominator: number) =>
      Number((2n * BigInt(amount) * BigInt(numerator) + BigInt(denominator)) / (2n * BigInt(denominator)));
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (amount, basisPoints) => {
          expect(applyRatio(amount, basisPoints, 10_000, 'usd')).toBe(applyRate(amount, basisPoints, 'usd'));
        },
      ),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.integer({ min: 1, max: 200_000 }),
        (amount, numerator, denominator) => {
          expect(applyRatio(amount, numerator, denominator, 'eur')).toBe(exact(amount, numerator, denominator));
        },
      ),
    );
    expect(applyRatio(1699, 9975, 100_000, 'cad')).toBe(169); // 169.4752…
    expect(applyRatio(1530, 5000, 100_000, 'cad')).toBe(77); // 76.5, half up
    expect(applyRatio(1451, 19_000, 119_000, 'eur')).toBe(232); // 231.68…
    expect(() => applyRatio(1, 1, 0, 'usd')).toThrow();
  });
});
