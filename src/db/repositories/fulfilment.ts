// The terms a destination brings to a price (src/domain/fulfilment.ts): its region's tax mode and shipping options and
// the taxes in force where the goods go, from tax_rates and shipping_options (migration 010), in one prepared
// statement (PostgreSQL's own $n placeholders, for runPrepared).
import type { FulfilmentTerms } from '../../domain/fulfilment.js';
import { runPrepared, type Db } from '../knex.js';

export interface FulfilmentQuery {
  /** The session's region: the destination must be one of its countries (its prices are in its currency). */
  regionId: string;
  /** ISO 3166-1 alpha-2, any case. */
  country: string;
  /** Full ISO 3166-2 code (`CA-QC`), or null where the address names none. */
  subdivision: string | null;
  /** The day whose rates apply (UTC): today for a quote. */
  at: Date;
}

// Of each tax's rows for the country as a whole and for the subdivision, the one in force on the day (the latest
// valid_from not after it). A federal tax is listed before a provincial one (GST, then PST or QST).
const TERMS_SQL = `
select r.id as region_id, r.currency_code, r.prices_include_tax,
  coalesce((
    select json_agg(json_build_object(
      'jurisdiction', t.jurisdiction, 'taxCode', t.tax_code, 'name', t.name, 'rate', t.rate,
      'shippingTaxable', t.shipping_taxable
    ) order by t.jurisdiction <> t.country, t.tax_code)
    from (
      select distinct on (coalesce(subdivision, ''), tax_code) *
      from tax_rates
      where country = upper($1) and (subdivision is null or subdivision = upper($2)) and valid_from <= $3::date
      order by coalesce(subdivision, ''), tax_code, valid_from desc
    ) t
  ), '[]'::json) as tax_rates,
  coalesce((
    select json_agg(json_build_object(
      'code', s.code, 'title', s.title, 'description', s.description, 'amount', s.amount,
      'freeShippingThreshold', s.free_shipping_threshold, 'minBusinessDays', s.min_business_days,
      'maxBusinessDays', s.max_business_days
    ) order by s.rank)
    from shipping_options s
    where s.region_id = r.id
  ), '[]'::json) as shipping_options
from regions r
where r.id = $4 and exists (select 1 from region_countries c where c.region_id = r.id and c.iso_2 = lower($1))`;

interface TermsRow {
  region_id: string;
  currency_code: string;
  prices_include_tax: boolean;
  tax_rates: FulfilmentTerms['taxRates'];
  shipping_options: FulfilmentTerms['shippingOptions'];
}

/** The terms for shipping to `country` (and `subdivision`) in `regionId`; undefined when the region does not ship there. */
export async function loadFulfilmentTerms(db: Db, query: FulfilmentQuery): Promise<FulfilmentTerms | undefined> {
  const day = query.at.toISOString().slice(0, 10);
  const [row] = await runPrepared<TermsRow>(db, 'fulfilment_terms', TERMS_SQL, [
    query.country,
    query.subdivision,
    day,
    query.regionId,
  ]);
  if (!row) return undefined;
  return {
    regionId: row.region_id,
    currencyCode: row.currency_code,
    pricesIncludeTax: row.prices_include_tax,
    taxRates: row.tax_rates,
    shippingOptions: row.shipping_options,
  };
}

/** The ISO 3166-1 alpha-2 codes (upper case) of the countries `regionId` ships to. */
export async function regionCountryCodes(db: Db, regionId: string): Promise<string[]> {
  const rows = await runPrepared<{ iso_2: string }>(
    db,
    'region_country_codes',
    'select upper(iso_2) as iso_2 from region_countries where region_id = $1 order by iso_2',
    [regionId],
  );
  return rows.map((row) => row.iso_2);
}
