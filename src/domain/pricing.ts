// Prices a cart. Pure: integer minor units in, integer minor units out, every rounding done once and on purpose.
//   line base      = unit price × quantity
//   discount       = the promotion applied to the goods subtotal (one rounding), allocated to lines by base
//                    amount so the line discounts sum exactly to it
//   line subtotal  = base − its discount share
//   line tax       = region rate × line subtotal (one rounding per line); tax = Σ line tax
//   shipping       = the region's flat rate, free once goods after discount reach its threshold; not taxed;
//                    nothing to ship (an agent cart whose last line was removed) costs nothing
//   total          = subtotal − discount + shipping + tax
import { allocateByWeight, applyRate, type MinorUnits } from './money.js';
import type { AppliedPromotion } from './promotions.js';

export interface LineToPrice {
  variantId: string;
  title: string;
  quantity: number;
  unitAmount: MinorUnits;
}

export interface RegionTerms {
  currencyCode: string;
  taxRateBps: number;
  shippingAmount: MinorUnits;
  freeShippingThreshold: MinorUnits | null;
}

export interface PricedLine extends LineToPrice {
  baseAmount: MinorUnits;
  discount: MinorUnits;
  subtotal: MinorUnits;
  tax: MinorUnits;
  total: MinorUnits;
}

export interface Totals {
  subtotal: MinorUnits;
  discount: MinorUnits;
  shipping: MinorUnits;
  tax: MinorUnits;
  total: MinorUnits;
}

export interface PricedCart {
  currencyCode: string;
  lines: PricedLine[];
  totals: Totals;
}

function discountFor(promotion: AppliedPromotion | null, subtotal: MinorUnits, currencyCode: string): MinorUnits {
  if (!promotion) return 0;
  if (promotion.kind === 'percentage') return applyRate(subtotal, promotion.value, currencyCode);
  return Math.min(promotion.value, subtotal);
}

function shippingFor(lineCount: number, goodsAfterDiscount: MinorUnits, region: RegionTerms): MinorUnits {
  const free =
    lineCount === 0 || (region.freeShippingThreshold !== null && goodsAfterDiscount >= region.freeShippingThreshold);
  return free ? 0 : region.shippingAmount;
}

export function priceCart(lines: LineToPrice[], region: RegionTerms, promotion: AppliedPromotion | null): PricedCart {
  const { currencyCode } = region;
  const bases = lines.map((line) => line.unitAmount * line.quantity);
  const subtotal = bases.reduce((sum, base) => sum + base, 0);
  const discount = discountFor(promotion, subtotal, currencyCode);
  const discountShares = allocateByWeight(discount, bases, currencyCode);

  const priced = lines.map((line, index): PricedLine => {
    const baseAmount = bases[index]!;
    const lineDiscount = discountShares[index]!;
    const lineSubtotal = baseAmount - lineDiscount;
    const tax = applyRate(lineSubtotal, region.taxRateBps, currencyCode);
    return { ...line, baseAmount, discount: lineDiscount, subtotal: lineSubtotal, tax, total: lineSubtotal + tax };
  });

  const tax = priced.reduce((sum, line) => sum + line.tax, 0);
  const shipping = shippingFor(lines.length, subtotal - discount, region);
  return {
    currencyCode,
    lines: priced,
    totals: { subtotal, discount, shipping, tax, total: subtotal - discount + shipping + tax },
  };
}
