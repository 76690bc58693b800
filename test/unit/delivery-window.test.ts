// deliveryWindow (src/domain/fulfilment.ts): an option's window in business days as dates, weekends skipped, whole
// UTC days. ACP's fulfillment_options show it as earliest_delivery_time and latest_delivery_time.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryWindow } from '../../src/domain/fulfilment.js';

describe('deliveryWindow', () => {
  it('counts business days from the day after, skipping Saturday and Sunday', () => {
    // Thursday 2026-11-26 in the afternoon: 1 business day is Friday, 3 is Tuesday.
    const thursday = new Date('2026-11-26T15:30:00Z');
    expect(deliveryWindow(thursday, { minBusinessDays: 1, maxBusinessDays: 3 })).toEqual({
      earliest: new Date('2026-11-27T00:00:00Z'),
      latest: new Date('2026-12-01T23:59:59Z'),
    });
    // From Saturday, the first business day is Monday.
    expect(deliveryWindow(new Date('2026-11-28T09:00:00Z'), { minBusinessDays: 1, maxBusinessDays: 1 })).toEqual({
      earliest: new Date('2026-11-30T00:00:00Z'),
      latest: new Date('2026-11-30T23:59:59Z'),
    });
  });

  it('never ends on a weekend, never before it starts, and is the same all day', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 20 }),
        (from, a, b) => {
          const option = { minBusinessDays: Math.min(a, b), maxBusinessDays: Math.max(a, b) };
          const { earliest, latest } = deliveryWindow(from, option);
          expect(earliest.getTime()).toBeLessThan(latest.getTime());
          if (option.minBusinessDays > 0) expect([0, 6]).not.toContain(earliest.getUTCDay());
          if (option.maxBusinessDays > 0) expect([0, 6]).not.toContain(latest.getUTCDay());
          const midnight = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
          expect(deliveryWindow(midnight, option)).toEqual({ earliest, latest });
        },
      ),
    );
  });
});
