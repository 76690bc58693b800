// What a destination brings to a price: the tax jurisdictions that levy on a sale shipped there and the shipping
// options of its region, as the fulfilment repository loads them (src/db/repositories/fulfilment.ts) from the
// tax_rates and shipping_options tables (migration 010). Pure records and the rules that pick among them.
import type { MinorUnits } from './money.js';

/** Tax rates are integer thousandths of a percent: 100 % = 100 000, Quebec's QST 9.975 % = 9 975. */
export const RATE_SCALE = 100_000;

export type TaxCode = 'SALES_TAX' | 'VAT' | 'GST' | 'HST' | 'PST' | 'QST' | 'CONSUMPTION_TAX';

/** One tax levied on sales shipped to a place: a row of tax_rates in force on the day asked about. */
export interface TaxRate {
  /** Who levies it: a country (`DE`, `CA` for GST) or a subdivision (`US-CA`, `CA-QC` for QST). */
  jurisdiction: string;
  taxCode: TaxCode;
  /** How a receipt names it, e.g. `GST`, `QST`, `VAT (DE)`, `California sales tax`. */
  name: string;
  /** Thousandths of a percent (RATE_SCALE). */
  rate: number;
  /** Whether the jurisdiction taxes the shipping charge as part of the supply. */
  shippingTaxable: boolean;
}

export type ShippingCode = 'standard' | 'express';

export interface ShippingOption {
  code: ShippingCode;
  title: string;
  description: string;
  /** Minor units of the region's currency; tax included where the region's prices include tax. */
  amount: MinorUnits;
  /** Goods after discount at or above this ship for nothing; null: never free. */
  freeShippingThreshold: MinorUnits | null;
  minBusinessDays: number;
  maxBusinessDays: number;
}

/** Everything a destination changes in a price, for one region. */
export interface FulfilmentTerms {
  regionId: string;
  currencyCode: string;
  /** Whether the region's shelf prices (and shipping amounts) include tax: EU, UK and Japan (docs/fulfilment-and-tax.md). */
  pricesIncludeTax: boolean;
  /** The taxes levied at the destination; more than one where they stack (Canada's GST and a PST or QST). */
  taxRates: TaxRate[];
  /** The region's options, cheapest first. */
  shippingOptions: ShippingOption[];
}

/** A shipping option as the buyer would pay for it with these goods: free once the goods reach its threshold. */
export function shippingCharge(option: ShippingOption, goodsAfterDiscount: MinorUnits, lineCount: number): MinorUnits {
  const free =
    lineCount === 0 || (option.freeShippingThreshold !== null && goodsAfterDiscount >= option.freeShippingThreshold);
  return free ? 0 : option.amount;
}

/** The option with `code`, or the region's first (cheapest) one when none is chosen. */
export function chooseShippingOption(
  terms: FulfilmentTerms,
  code: string | null | undefined,
): ShippingOption | undefined {
  if (code === null || code === undefined) return terms.shippingOptions[0];
  return terms.shippingOptions.find((option) => option.code === code);
}

/** The day `days` business days (Monday to Friday, UTC) after `from`'s day. */
function businessDaysAfter(from: Date, days: number): Date {
  const day = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  for (let left = days; left > 0;) {
    day.setUTCDate(day.getUTCDate() + 1);
    const weekday = day.getUTCDay();
    if (weekday !== 0 && weekday !== 6) left -= 1;
  }
  return day;
}

/**
 * When goods sent on `from`'s day arrive with an option: from the start (00:00 UTC) of its first business day to the
 * end (23:59:59 UTC) of its last. Whole days, so a session read again the same day shows the same window.
 */
export function deliveryWindow(
  from: Date,
  option: Pick<ShippingOption, 'minBusinessDays' | 'maxBusinessDays'>,
): { earliest: Date; latest: Date } {
  const latest = businessDaysAfter(from, option.maxBusinessDays);
  latest.setUTCHours(23, 59, 59, 0);
  return { earliest: businessDaysAfter(from, option.minBusinessDays), latest };
}
