// The store facts a shopper asks an agent about: shipping, tax and returns, per region. Shipping and tax come from
// the same region rows checkout prices with (src/domain/pricing.ts applies them), so the facts and the totals agree.
import { listRegionsWithCountries, type RegionRow } from '../db/repositories/catalog.js';
import type { Db } from '../db/knex.js';
import { currencyOf, toMajorUnits } from '../domain/money.js';
import { resolveRegion } from '../services/catalog.js';
import type { ObjectSchema } from './schemas.js';

// The returns policy is the business's wording, not derived from data; it lives here until the store has a CMS.
const RETURNS_WINDOW_DAYS = 30;
const RETURNS_POLICY =
  `Unused items in their original packaging can be returned within ${RETURNS_WINDOW_DAYS} days of delivery for a full refund ` +
  'to the original payment method. Tongue scrapers are personal-hygiene items: once used they can be returned only if ' +
  'defective, and defective items are replaced or refunded.';

interface Amount {
  amount: number;
  currency: string;
}

interface RegionPolicy {
  region_id: string;
  name: string;
  currency_code: string;
  countries: Array<{ iso_2: string; display_name: string }>;
  shipping: { flat_rate: Amount; free_shipping_threshold: Amount | null; summary: string };
  tax: { rate_percent: number; prices_include_tax: boolean; summary: string };
}

export interface StorePolicies {
  regions: RegionPolicy[];
  returns: { window_days: number; policy: string };
}

const amount = (description: string) => ({
  type: 'object',
  description,
  required: ['amount', 'currency'],
  properties: {
    amount: { type: 'number', description: 'Major units (9.99 means 9.99 of the currency).' },
    currency: { type: 'string', description: 'ISO 4217 code, lowercase.' },
  },
  additionalProperties: false,
});
const string = { type: 'string' };
const closed = (properties: Record<string, unknown>) => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  additionalProperties: false,
});

/** The tool's output schema; not a REST representation, so it is written here. */
export const storePoliciesSchema = closed({
  regions: {
    type: 'array',
    items: closed({
      region_id: string,
      name: string,
      currency_code: string,
      countries: { type: 'array', items: closed({ iso_2: string, display_name: string }) },
      shipping: closed({
        flat_rate: amount('Charged once per order unless the order ships free.'),
        free_shipping_threshold: {
          ...amount('Orders whose goods total after discounts reaches this amount ship free; null: never free.'),
          type: ['object', 'null'],
        },
        summary: string,
      }),
      tax: closed({
        rate_percent: { type: 'number', description: 'Tax rate in percent, added at checkout.' },
        prices_include_tax: {
          type: 'boolean',
          description: 'Whether catalog prices include tax (they do not: tax is added at checkout).',
        },
        summary: string,
      }),
    }),
  },
  returns: closed({ window_days: { type: 'integer' }, policy: string }),
}) as ObjectSchema<StorePolicies>;

function inMajorUnits(minor: number, currency: string): Amount {
  return { amount: toMajorUnits(minor, currency), currency };
}

/** `4.95 USD`: the amount with the currency's own number of digits. */
function formatted(minor: number, currency: string): string {
  return `${toMajorUnits(minor, currency).toFixed(currencyOf(currency).exponent)} ${currency.toUpperCase()}`;
}

function shippingOf(region: RegionRow): RegionPolicy['shipping'] {
  const { currency_code: currency, shipping_amount: rate, free_shipping_threshold: threshold } = region;
  const free =
    threshold === null
      ? 'There is no free-shipping threshold.'
      : `Free when the goods total after discounts reaches ${formatted(threshold, currency)}.`;
  return {
    flat_rate: inMajorUnits(rate, currency),
    free_shipping_threshold: threshold === null ? null : inMajorUnits(threshold, currency),
    summary: `Flat ${formatted(rate, currency)} per order. ${free} Shipping is not taxed.`,
  };
}

function taxOf(region: RegionRow): RegionPolicy['tax'] {
  const ratePercent = region.tax_rate_bps / 100;
  return {
    rate_percent: ratePercent,
    prices_include_tax: false,
    summary: `Catalog prices exclude tax. ${ratePercent}% tax is added at checkout on the goods after discounts, rounded once per line; shipping is not taxed.`,
  };
}

/** Shipping, tax and returns for every region, or for the one named (an unknown id is the caller's mistake). */
export async function storePolicies(db: Db, regionId: string | undefined): Promise<StorePolicies> {
  if (regionId !== undefined) await resolveRegion(db, regionId);
  const { regions, countries } = await listRegionsWithCountries(db);
  return {
    regions: regions
      .filter((region) => regionId === undefined || region.id === regionId)
      .map((region) => ({
        region_id: region.id,
        name: region.name,
        currency_code: region.currency_code,
        countries: countries
          .filter((country) => country.region_id === region.id)
          .map(({ iso_2, display_name }) => ({ iso_2, display_name })),
        shipping: shippingOf(region),
        tax: taxOf(region),
      })),
    returns: { window_days: RETURNS_WINDOW_DAYS, policy: RETURNS_POLICY },
  };
}
