import { describe, expect, it } from 'vitest';
// The payment rules (amount, currency, stock, promotions) live in the order statement and are tested over HTTP in
// test/payments.test.ts.
import { quoteHash, statusAfterRefund, type Quote } from '../../src/domain/orders.js';

const quote: Quote = {
  currencyCode: 'usd',
  regionId: 'reg_us',
  lines: [
    {
      id: 'cali_1',
      variantId: 'v1',
      title: 'A',
      quantity: 2,
      unitAmount: 1299,
      baseAmount: 2598,
      discount: 260,
      subtotal: 2338,
      tax: 187,
      total: 2525,
    },
  ],
  totals: { subtotal: 2598, discount: 260, shipping: 0, tax: 187, total: 2525 },
  promoCodes: ['10OFF'],
};

describe('quote hash', () => {
  it('is stable for the same quote and changes with any amount, line or code', () => {
    expect(quoteHash(structuredClone(quote))).toBe(quoteHash(quote));
    expect(quoteHash({ ...quote, totals: { ...quote.totals, total: 2526 } })).not.toBe(quoteHash(quote));
    expect(quoteHash({ ...quote, lines: [{ ...quote.lines[0]!, quantity: 3 }] })).not.toBe(quoteHash(quote));
    expect(quoteHash({ ...quote, promoCodes: [] })).not.toBe(quoteHash(quote));
  });
});

describe('refund status', () => {
  it('is partial below the amount paid and full at or above it', () => {
    expect(statusAfterRefund('paid', 2525, 0)).toBe('paid');
    expect(statusAfterRefund('paid', 2525, 1)).toBe('partially_refunded');
    expect(statusAfterRefund('partially_refunded', 2525, 2525)).toBe('refunded');
    expect(statusAfterRefund('needs_review', 2525, 100)).toBe('needs_review');
    expect(statusAfterRefund('needs_review', 2525, 2600)).toBe('refunded');
  });
});
