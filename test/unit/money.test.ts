import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateByWeight, applyRate, toMajorUnits } from '../../src/domain/money.js';

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
});
