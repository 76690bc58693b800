// fast-check arbitraries shared by the pricing property tests.
import fc from 'fast-check';
import type { AppliedPromotion } from '../../src/domain/promotions.js';

/** No promotion, or a percentage (in basis points) or fixed-amount one. */
export const promotionArb: fc.Arbitrary<AppliedPromotion | null> = fc.option(
  fc.oneof(
    fc.record({
      code: fc.constant('P'),
      kind: fc.constant('percentage' as const),
      value: fc.integer({ min: 1, max: 10_000 }),
    }),
    fc.record({
      code: fc.constant('F'),
      kind: fc.constant('fixed' as const),
      value: fc.integer({ min: 1, max: 1_000_000 }),
    }),
  ),
  { nil: null },
);
