import { describe, expect, it } from 'vitest';
import {
  initialStatus,
  paymentProblems,
  planStock,
  quoteHash,
  statusAfterRefund,
  type Quote,
} from '../../src/domain/orders.js';

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

describe('payment checks', () => {
  it('accepts exactly the quoted total in the quoted currency (any case)', () => {
    expect(paymentProblems(quote, { amountPaid: 2525, currency: 'USD' })).toEqual([]);
  });
  it('flags any other amount, and another currency', () => {
    expect(paymentProblems(quote, { amountPaid: 2524, currency: 'usd' })).toEqual(['amount_mismatch']);
    expect(paymentProblems(quote, { amountPaid: 2526, currency: 'usd' })).toEqual(['amount_mismatch']);
    expect(paymentProblems(quote, { amountPaid: 2525, currency: 'eur' })).toEqual(['currency_mismatch']);
  });
  it('puts a flagged order in review', () => {
    expect(initialStatus([])).toBe('paid');
    expect(initialStatus(['amount_mismatch'])).toBe('needs_review');
  });
});

describe('stock coverage', () => {
  const variant = (id: string, inventory: number, manage = true, backorder = false) => ({
    id,
    manage_inventory: manage,
    allow_backorder: backorder,
    inventory_quantity: inventory,
  });
  it('takes paid quantities from managed variants only, summing repeated variants', () => {
    const plan = planStock(
      [
        { variantId: 'a', quantity: 2 },
        { variantId: 'a', quantity: 1 },
        { variantId: 'b', quantity: 5 },
      ],
      [variant('a', 10), variant('b', 0, false)],
    );
    expect(plan).toEqual({ updates: [{ id: 'a', inventoryQuantity: 7 }], short: false });
  });
  it('flags stock that cannot cover the order and floors it at zero', () => {
    expect(planStock([{ variantId: 'a', quantity: 3 }], [variant('a', 2)])).toEqual({
      updates: [{ id: 'a', inventoryQuantity: 0 }],
      short: true,
    });
  });
  it('lets backorder variants go below zero without a flag', () => {
    expect(planStock([{ variantId: 'a', quantity: 3 }], [variant('a', 2, true, true)])).toEqual({
      updates: [{ id: 'a', inventoryQuantity: -1 }],
      short: false,
    });
  });
  it('covers exactly the stock there is', () => {
    expect(planStock([{ variantId: 'a', quantity: 2 }], [variant('a', 2)])).toEqual({
      updates: [{ id: 'a', inventoryQuantity: 0 }],
      short: false,
    });
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
