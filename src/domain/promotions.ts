// Which of the requested promo codes apply to a cart, and why the others do not. Pure: the caller supplies the
// stored promotions and the clock. One code applies per cart; every other requested code is reported, never dropped.
import { toMajorUnits, type MinorUnits } from './money.js';

export interface Promotion {
  code: string; // canonical form, e.g. 10OFF
  kind: 'percentage' | 'fixed';
  /** Basis points for percentage codes; minor units of `currencyCode` for fixed ones. */
  value: number;
  currencyCode: string | null;
  minSubtotal: MinorUnits | null;
  startsAt: Date | null;
  endsAt: Date | null;
  usageLimit: number | null;
  timesRedeemed: number;
}

export type AppliedPromotion = Pick<Promotion, 'code' | 'kind' | 'value'>;

export type PromoRejection =
  | 'promo_code_invalid'
  | 'promo_code_expired'
  | 'promo_code_not_yet_active'
  | 'promo_code_exhausted'
  | 'promo_code_not_applicable'
  | 'promo_code_not_combinable'
  | 'promo_code_duplicate';

/** Why `promo_code_not_applicable` applies, which the ACP and UCP bindings report as two different codes. */
export type NotApplicableCause = 'wrong_currency' | 'minimum_not_met';

export interface PromoMessage {
  type: 'warning';
  code: PromoRejection;
  param: string;
  message: string;
  /** The requested code's position and text, as sent. */
  index: number;
  requested: string;
  cause?: NotApplicableCause;
}

export interface PromoOutcome {
  applied: AppliedPromotion | null;
  messages: PromoMessage[];
}

export interface PromoContext {
  now: Date;
  currencyCode: string;
  subtotal: MinorUnits;
}

export function canonicalCode(code: string): string {
  return code.trim().toUpperCase();
}

/** The codes as stored in the promotions table: canonical, once each, in a fixed order. */
export function canonicalCodes(codes: string[]): string[] {
  return [...new Set(codes.map(canonicalCode))].sort();
}

function rejectionOf(
  promotion: Promotion | undefined,
  context: PromoContext,
): [PromoRejection, string, NotApplicableCause?] | null {
  if (!promotion) return ['promo_code_invalid', 'is not a valid promo code'];
  if (promotion.endsAt && context.now >= promotion.endsAt)
    return ['promo_code_expired', `expired on ${promotion.endsAt.toISOString().slice(0, 10)}`];
  if (promotion.startsAt && context.now < promotion.startsAt)
    return ['promo_code_not_yet_active', `is not active until ${promotion.startsAt.toISOString().slice(0, 10)}`];
  if (promotion.usageLimit !== null && promotion.timesRedeemed >= promotion.usageLimit)
    return ['promo_code_exhausted', 'has reached its usage limit'];
  if (promotion.currencyCode && promotion.currencyCode !== context.currencyCode) {
    return [
      'promo_code_not_applicable',
      `applies only to ${promotion.currencyCode.toUpperCase()} carts`,
      'wrong_currency',
    ];
  }
  if (promotion.minSubtotal !== null && context.subtotal < promotion.minSubtotal) {
    return [
      'promo_code_not_applicable',
      `needs a subtotal of at least ${toMajorUnits(promotion.minSubtotal, context.currencyCode)} ${context.currencyCode.toUpperCase()}`,
      'minimum_not_met',
    ];
  }
  return null;
}

/**
 * Decides the outcome of each requested code, in order: the first valid one applies; later valid ones are
 * `promo_code_not_combinable`; repeats of an earlier code are `promo_code_duplicate`.
 */
export function applyPromoCodes(
  requested: string[],
  stored: Map<string, Promotion>,
  context: PromoContext,
): PromoOutcome {
  const outcome: PromoOutcome = { applied: null, messages: [] };
  const seen = new Set<string>();
  requested.forEach((raw, index) => {
    const code = canonicalCode(raw);
    const param = `promo_codes[${index}]`;
    const reject = (rejection: PromoRejection, why: string, cause?: NotApplicableCause) =>
      outcome.messages.push({
        type: 'warning',
        code: rejection,
        param,
        message: `Promo code ${raw.trim()} ${why}; it was not applied.`,
        index,
        requested: raw,
        ...(cause ? { cause } : {}),
      });
    if (seen.has(code)) return reject('promo_code_duplicate', 'was already given');
    seen.add(code);
    const promotion = stored.get(code);
    const rejection = rejectionOf(promotion, context);
    if (rejection) return reject(...rejection);
    if (outcome.applied) return reject('promo_code_not_combinable', `cannot be combined with ${outcome.applied.code}`);
    outcome.applied = { code: promotion!.code, kind: promotion!.kind, value: promotion!.value };
  });
  return outcome;
}
