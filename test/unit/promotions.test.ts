import { describe, expect, it } from 'vitest';
import { applyPromoCodes, type Promotion } from '../../src/domain/promotions.js';

const promotion = (code: string, overrides: Partial<Promotion> = {}): Promotion => ({
  code,
  kind: 'percentage',
  value: 1000,
  currencyCode: null,
  minSubtotal: null,
  startsAt: null,
  endsAt: null,
  usageLimit: null,
  timesRedeemed: 0,
  ...overrides,
});

const stored = new Map(
  [
    promotion('10OFF'),
    promotion('WELCOME5', { kind: 'fixed', value: 500, currencyCode: 'usd', minSubtotal: 2000 }),
    promotion('SPRING20', { startsAt: new Date('2026-03-01'), endsAt: new Date('2026-06-01') }),
    promotion('LAUNCH50', { usageLimit: 100, timesRedeemed: 100 }),
    promotion('NEWYEAR27', { startsAt: new Date('2027-01-01') }),
  ].map((p) => [p.code, p]),
);
const context = { now: new Date('2026-11-21T12:00:00Z'), currencyCode: 'usd', subtotal: 2598 };

describe('applyPromoCodes', () => {
  it('applies a valid code case-insensitively, in canonical form', () => {
    expect(applyPromoCodes([' 10off '], stored, context)).toEqual({
      applied: { code: '10OFF', kind: 'percentage', value: 1000 },
      messages: [],
    });
  });

  it.each([
    ['NOPE', 'promo_code_invalid'],
    ['spring20', 'promo_code_expired'],
    ['LAUNCH50', 'promo_code_exhausted'],
    ['NEWYEAR27', 'promo_code_not_yet_active'],
  ])('reports %s as %s, naming its position', (code, reason) => {
    const outcome = applyPromoCodes(['10OFF', code], stored, context);
    expect(outcome.applied?.code).toBe('10OFF');
    expect(outcome.messages).toEqual([
      {
        type: 'warning',
        code: reason,
        param: 'promo_codes[1]',
        message: expect.stringContaining(code),
        index: 1,
        requested: code,
      },
    ]);
  });

  it('checks currency and minimum subtotal of fixed codes', () => {
    expect(applyPromoCodes(['WELCOME5'], stored, context).applied?.code).toBe('WELCOME5');
    expect(applyPromoCodes(['WELCOME5'], stored, { ...context, currencyCode: 'eur' }).messages[0]).toMatchObject({
      code: 'promo_code_not_applicable',
      cause: 'wrong_currency',
    });
    expect(applyPromoCodes(['WELCOME5'], stored, { ...context, subtotal: 1999 }).messages[0]).toMatchObject({
      cause: 'minimum_not_met',
      message: expect.stringContaining('at least 20 USD'),
    });
  });

  it('applies one code per cart and reports the rest', () => {
    const outcome = applyPromoCodes(['WELCOME5', '10OFF', 'welcome5'], stored, context);
    expect(outcome.applied?.code).toBe('WELCOME5');
    expect(outcome.messages.map((m) => [m.param, m.code])).toEqual([
      ['promo_codes[1]', 'promo_code_not_combinable'],
      ['promo_codes[2]', 'promo_code_duplicate'],
    ]);
  });

  it('turns an expired code active again only inside its window', () => {
    expect(applyPromoCodes(['SPRING20'], stored, { ...context, now: new Date('2026-04-01') }).applied?.code).toBe(
      'SPRING20',
    );
    expect(applyPromoCodes(['NEWYEAR27'], stored, { ...context, now: new Date('2027-01-02') }).applied?.code).toBe(
      'NEWYEAR27',
    );
  });
});
