// The store's catalogue and promo codes. Inserted once: every row is keyed by a fixed id and inserted with ON CONFLICT DO NOTHING,
// so starting twice, or two instances starting at once, never duplicates anything.
import type { Knex } from 'knex';

const PRODUCT_2PACK = 'prod_01tongue2pack';
const PRODUCT_TRAVEL = 'prod_01tonguetravel';

export const regions = [
  {
    id: 'reg_us',
    name: 'United States',
    currency_code: 'usd',
    is_default: true,
    rank: 1,
    tax_rate_bps: 725,
    shipping_amount: 495,
    free_shipping_threshold: 2500,
    prices_include_tax: false,
  },
  {
    id: 'reg_eu',
    name: 'European Union',
    currency_code: 'eur',
    is_default: false,
    rank: 2,
    tax_rate_bps: 2100,
    shipping_amount: 495,
    free_shipping_threshold: 3000,
    prices_include_tax: true,
  },
  {
    id: 'reg_gb',
    name: 'United Kingdom',
    currency_code: 'gbp',
    is_default: false,
    rank: 3,
    tax_rate_bps: 2000,
    shipping_amount: 395,
    free_shipping_threshold: 2500,
    prices_include_tax: true,
  },
  {
    id: 'reg_ca',
    name: 'Canada',
    currency_code: 'cad',
    is_default: false,
    rank: 4,
    tax_rate_bps: 1300,
    shipping_amount: 695,
    free_shipping_threshold: 3500,
    prices_include_tax: false,
  },
  {
    id: 'reg_jp',
    name: 'Japan',
    currency_code: 'jpy',
    is_default: false,
    rank: 5,
    tax_rate_bps: 1000,
    shipping_amount: 600,
    free_shipping_threshold: 5000,
    prices_include_tax: true,
  },
];

const regionCountries = [
  ['reg_us', 'us', 'United States'],
  ['reg_eu', 'de', 'Germany'],
  ['reg_eu', 'fr', 'France'],
  ['reg_eu', 'nl', 'Netherlands'],
  ['reg_eu', 'ie', 'Ireland'],
  ['reg_eu', 'es', 'Spain'],
  ['reg_eu', 'it', 'Italy'],
  ['reg_gb', 'gb', 'United Kingdom'],
  ['reg_ca', 'ca', 'Canada'],
  ['reg_jp', 'jp', 'Japan'],
].map(([region_id, iso_2, display_name]) => ({ region_id, iso_2, display_name }));

// Tax by destination (issue #32; docs/fulfilment-and-tax.md). Rates in thousandths of a percent (RATE_SCALE,
// src/domain/fulfilment.ts). Each row is one tax levied on sales shipped to a country or one of its subdivisions from
// valid_from on; a later row for the same place and tax replaces it from its own date.
//
// United States: the state-level rate only (no county, city or district taxes), as published for 2025 by the Tax
// Foundation ("State and Local Sales Tax Rates"): California's 7.25 %, Utah's 6.10 % and Virginia's 5.30 % include
// the local rate levied statewide. Alaska, Delaware, Montana, New Hampshire and Oregon levy no state sales tax.
// shipping_taxable is each state's general rule for a delivery charge stated separately on the invoice, for goods
// shipped by common carrier with no pick-up option (as this store ships): true where such charges are part of the
// taxable sale, false where they are exempt when separately stated (AL, AZ, CA, CO, ID, IA, LA, ME, MD, MA, MI (since
// 2023), MO, NV, OK, UT, VA, WY); a state's conditions beyond that (e.g. California's "not above actual cost") are
// not modelled.
const US_STATES: Array<[string, string, number, boolean]> = [
  ['AL', 'Alabama', 4000, false],
  ['AK', 'Alaska', 0, false],
  ['AZ', 'Arizona', 5600, false],
  ['AR', 'Arkansas', 6500, true],
  ['CA', 'California', 7250, false],
  ['CO', 'Colorado', 2900, false],
  ['CT', 'Connecticut', 6350, true],
  ['DE', 'Delaware', 0, false],
  ['DC', 'District of Columbia', 6000, true],
  ['FL', 'Florida', 6000, true],
  ['GA', 'Georgia', 4000, true],
  ['HI', 'Hawaii', 4000, true],
  ['ID', 'Idaho', 6000, false],
  ['IL', 'Illinois', 6250, true],
  ['IN', 'Indiana', 7000, true],
  ['IA', 'Iowa', 6000, false],
  ['KS', 'Kansas', 6500, true],
  ['KY', 'Kentucky', 6000, true],
  ['LA', 'Louisiana', 5000, false],
  ['ME', 'Maine', 5500, false],
  ['MD', 'Maryland', 6000, false],
  ['MA', 'Massachusetts', 6250, false],
  ['MI', 'Michigan', 6000, false],
  ['MN', 'Minnesota', 6875, true],
  ['MS', 'Mississippi', 7000, true],
  ['MO', 'Missouri', 4225, false],
  ['MT', 'Montana', 0, false],
  ['NE', 'Nebraska', 5500, true],
  ['NV', 'Nevada', 6850, false],
  ['NH', 'New Hampshire', 0, false],
  ['NJ', 'New Jersey', 6625, true],
  ['NM', 'New Mexico', 4875, true],
  ['NY', 'New York', 4000, true],
  ['NC', 'North Carolina', 4750, true],
  ['ND', 'North Dakota', 5000, true],
  ['OH', 'Ohio', 5750, true],
  ['OK', 'Oklahoma', 4500, false],
  ['OR', 'Oregon', 0, false],
  ['PA', 'Pennsylvania', 6000, true],
  ['RI', 'Rhode Island', 7000, true],
  ['SC', 'South Carolina', 6000, true],
  ['SD', 'South Dakota', 4200, true],
  ['TN', 'Tennessee', 7000, true],
  ['TX', 'Texas', 6250, true],
  ['UT', 'Utah', 6100, false],
  ['VT', 'Vermont', 6000, true],
  ['VA', 'Virginia', 5300, false],
  ['WA', 'Washington', 6500, true],
  ['WV', 'West Virginia', 6000, true],
  ['WI', 'Wisconsin', 5000, true],
  ['WY', 'Wyoming', 4000, false],
];

// Changes in force from a later date. District of Columbia: 7 % from 2026-10-01 as scheduled by its FY 2025 Budget
// Support Act (the 6.5 % step of 2025-10-01 was repealed; the 7 % step stood when this was written: confirm).
const US_RATE_CHANGES: Array<[string, string, number, boolean, string]> = [
  ['DC', 'District of Columbia', 7000, true, '2026-10-01'],
];

// Canada: GST 5 % federally; HST (federal and provincial in one) in Ontario 13 %, Nova Scotia 14 % (15 % until
// 2025-03-31), New Brunswick, Newfoundland and Labrador and Prince Edward Island 15 %; GST and a provincial tax in
// British Columbia (PST 7 %), Manitoba (RST 7 %), Saskatchewan (PST 6 %) and Quebec (QST 9.975 %); GST only in
// Alberta and the territories. Shipping is taxed as part of the supply by GST/HST and QST; BC, Manitoba and
// Saskatchewan charge their PST on delivery charges when the seller delivers as part of the sale, as here.
const CANADA: Array<[string, 'GST' | 'HST' | 'PST' | 'QST', string, number, string]> = [
  ['AB', 'GST', 'GST', 5000, '1991-01-01'],
  ['NT', 'GST', 'GST', 5000, '1991-01-01'],
  ['NU', 'GST', 'GST', 5000, '1999-04-01'],
  ['YT', 'GST', 'GST', 5000, '1991-01-01'],
  ['BC', 'GST', 'GST', 5000, '1991-01-01'],
  ['BC', 'PST', 'PST (BC)', 7000, '2013-04-01'],
  ['MB', 'GST', 'GST', 5000, '1991-01-01'],
  ['MB', 'PST', 'RST (MB)', 7000, '2019-07-01'],
  ['SK', 'GST', 'GST', 5000, '1991-01-01'],
  ['SK', 'PST', 'PST (SK)', 6000, '2017-03-23'],
  ['QC', 'GST', 'GST', 5000, '1991-01-01'],
  ['QC', 'QST', 'QST', 9975, '2013-01-01'],
  ['ON', 'HST', 'HST', 13000, '2010-07-01'],
  ['NS', 'HST', 'HST', 15000, '2010-07-01'],
  ['NS', 'HST', 'HST', 14000, '2025-04-01'],
  ['NB', 'HST', 'HST', 15000, '2016-07-01'],
  ['NL', 'HST', 'HST', 15000, '2016-07-01'],
  ['PE', 'HST', 'HST', 15000, '2016-10-01'],
];

// The EU member states the EU region ships to (standard VAT rate), the UK and Japan (consumption tax: 7.8 % national
// and 2.2 % local, levied as one 10 %). Shipping follows the goods it delivers: taxed at the goods' rate.
const COUNTRY_TAXES: Array<[string, 'VAT' | 'CONSUMPTION_TAX', string, number, string]> = [
  ['DE', 'VAT', 'VAT (DE)', 19000, '2007-01-01'],
  ['FR', 'VAT', 'VAT (FR)', 20000, '2014-01-01'],
  ['NL', 'VAT', 'VAT (NL)', 21000, '2012-10-01'],
  ['IE', 'VAT', 'VAT (IE)', 23000, '2012-01-01'],
  ['ES', 'VAT', 'VAT (ES)', 21000, '2012-09-01'],
  ['IT', 'VAT', 'VAT (IT)', 22000, '2013-10-01'],
  ['GB', 'VAT', 'VAT', 20000, '2011-01-04'],
  ['JP', 'CONSUMPTION_TAX', 'Consumption tax', 10000, '2019-10-01'],
];

export const taxRates = [
  ...US_STATES.map(([state, name, rate, shippingTaxable]) => ({
    id: `txr_us_${state.toLowerCase()}`,
    country: 'US',
    subdivision: `US-${state}`,
    jurisdiction: `US-${state}`,
    tax_code: 'SALES_TAX',
    name: `${name} sales tax`,
    rate,
    shipping_taxable: shippingTaxable,
    valid_from: '2025-01-01',
  })),
  ...US_RATE_CHANGES.map(([state, name, rate, shippingTaxable, validFrom]) => ({
    id: `txr_us_${state.toLowerCase()}_${validFrom.replaceAll('-', '')}`,
    country: 'US',
    subdivision: `US-${state}`,
    jurisdiction: `US-${state}`,
    tax_code: 'SALES_TAX',
    name: `${name} sales tax`,
    rate,
    shipping_taxable: shippingTaxable,
    valid_from: validFrom,
  })),
  ...CANADA.map(([province, taxCode, name, rate, validFrom]) => ({
    id: `txr_ca_${province.toLowerCase()}_${taxCode.toLowerCase()}_${validFrom.replaceAll('-', '')}`,
    country: 'CA',
    subdivision: `CA-${province}`,
    jurisdiction: taxCode === 'GST' ? 'CA' : `CA-${province}`,
    tax_code: taxCode,
    name,
    rate,
    shipping_taxable: true,
    valid_from: validFrom,
  })),
  ...COUNTRY_TAXES.map(([country, taxCode, name, rate, validFrom]) => ({
    id: `txr_${country.toLowerCase()}_${taxCode.toLowerCase()}`,
    country,
    subdivision: null,
    jurisdiction: country,
    tax_code: taxCode,
    name,
    rate,
    shipping_taxable: true,
    valid_from: validFrom,
  })),
];

// Standard keeps each region's flat rate and free-shipping threshold; Express is never free (it is the upgrade the
// buyer chooses to pay for). Amounts in the region's minor units, tax included where its prices include tax.
interface RegionShipping {
  region_id: string;
  standard: [amount: number, freeShippingThreshold: number, minDays: number, maxDays: number];
  express: [amount: number, minDays: number, maxDays: number];
}

const SHIPPING: RegionShipping[] = [
  { region_id: 'reg_us', standard: [495, 2500, 3, 5], express: [1495, 1, 2] },
  { region_id: 'reg_eu', standard: [495, 3000, 3, 6], express: [1495, 1, 3] },
  { region_id: 'reg_gb', standard: [395, 2500, 2, 4], express: [995, 1, 2] },
  { region_id: 'reg_ca', standard: [695, 3500, 4, 8], express: [1995, 1, 3] },
  { region_id: 'reg_jp', standard: [600, 5000, 2, 4], express: [1200, 1, 2] },
];

export const shippingOptions = SHIPPING.flatMap(({ region_id, standard, express }) => [
  {
    region_id,
    code: 'standard',
    title: 'Standard shipping',
    description: `Tracked delivery in ${standard[2]}–${standard[3]} business days.`,
    amount: standard[0],
    free_shipping_threshold: standard[1],
    min_business_days: standard[2],
    max_business_days: standard[3],
    rank: 1,
  },
  {
    region_id,
    code: 'express',
    title: 'Express shipping',
    description: `Priority tracked delivery in ${express[1]}–${express[2]} business days.`,
    amount: express[0],
    free_shipping_threshold: null,
    min_business_days: express[1],
    max_business_days: express[2],
    rank: 2,
  },
]);

const collections = [{ id: 'pcol_01tonguecare', title: 'Tongue Care', handle: 'tongue-care' }];

const categories = [
  {
    id: 'pcat_01oralcare',
    name: 'Oral Care',
    handle: 'oral-care',
    description: 'Everyday tools for a clean mouth and fresh breath.',
    parent_id: null,
  },
  {
    id: 'pcat_01tonguescrapers',
    name: 'Tongue Scrapers',
    handle: 'tongue-scrapers',
    description: 'Stainless steel scrapers that lift the coating from the tongue.',
    parent_id: 'pcat_01oralcare',
  },
  {
    id: 'pcat_01travel',
    name: 'Travel Sets',
    handle: 'travel-sets',
    description: 'Oral care that packs into a wash bag.',
    parent_id: 'pcat_01oralcare',
  },
];

const products = [
  {
    id: PRODUCT_2PACK,
    title: 'Stainless Steel Tongue Scraper — 2-Pack',
    handle: 'tongue-scraper-2-pack',
    description:
      '<p>Two medical-grade stainless steel tongue scrapers that lift away the film brushing leaves behind, for fresher breath in ten seconds a day.</p>' +
      '<ul><li>One-piece 316L surgical steel: no seams, no plastic, nothing to crack or harbour bacteria</li>' +
      '<li>Rounded, polished edge that is firm on the tongue and gentle on taste buds</li>' +
      '<li>Dishwasher-safe and boilable; built to last for years</li></ul>' +
      '<p>Two in the box: one for you and one for the guest bathroom, or one for home and one for the gym bag.</p>',
    material: 'Medical-grade 316L stainless steel',
    thumbnail: 'https://cdn.storefront.example/images/tongue-scraper-2-pack.jpg',
    collection_id: 'pcol_01tonguecare',
    rank: 1,
  },
  {
    id: PRODUCT_TRAVEL,
    title: 'Stainless Steel Tongue Scraper — 2-Pack with Travel Cases',
    handle: 'tongue-scraper-2-pack-travel-cases',
    description:
      '<p>The same two medical-grade stainless steel tongue scrapers, each with its own ventilated travel case so it dries clean between uses.</p>' +
      '<ul><li>One-piece 316L surgical steel scrapers with a rounded, polished edge</li>' +
      '<li>Two ventilated hard cases with airflow slots: no trapped moisture in a wash bag</li>' +
      '<li>Cases are BPA-free and dishwasher-safe (top rack)</li></ul>',
    material: 'Medical-grade 316L stainless steel; polypropylene cases',
    thumbnail: 'https://cdn.storefront.example/images/tongue-scraper-2-pack-travel-cases.jpg',
    collection_id: 'pcol_01tonguecare',
    rank: 2,
  },
];

const productCategories = [
  { product_id: PRODUCT_2PACK, category_id: 'pcat_01tonguescrapers' },
  { product_id: PRODUCT_TRAVEL, category_id: 'pcat_01tonguescrapers' },
  { product_id: PRODUCT_TRAVEL, category_id: 'pcat_01travel' },
];

const variants = [
  {
    id: 'variant_01tongue2pack',
    product_id: PRODUCT_2PACK,
    title: '2-Pack',
    sku: 'TS-316L-2PK',
    manage_inventory: true,
    allow_backorder: false,
    inventory_quantity: 240,
    rank: 1,
  },
  {
    id: 'variant_01tonguetravel',
    product_id: PRODUCT_TRAVEL,
    title: '2-Pack + 2 Travel Cases',
    sku: 'TS-316L-2PK-TC',
    manage_inventory: true,
    allow_backorder: false,
    inventory_quantity: 85,
    rank: 1,
  },
];

// Minor units per region, tax excluded.
const prices: Record<string, Record<string, number>> = {
  variant_01tongue2pack: { reg_us: 1299, reg_eu: 1199, reg_gb: 1099, reg_ca: 1699, reg_jp: 1900 },
  variant_01tonguetravel: { reg_us: 1999, reg_eu: 1899, reg_gb: 1699, reg_ca: 2599, reg_jp: 2900 },
};

const reviews = [
  [
    PRODUCT_2PACK,
    'rev_01a7k3',
    'Priya S.',
    'Cleaner than plastic',
    'Does in one pass what my plastic scraper needed three for. My dentist noticed at the next cleaning.',
    5,
    '2026-03-14',
    true,
  ],
  [
    PRODUCT_2PACK,
    'rev_01b2m9',
    'Daniel K.',
    'Morning breath, solved',
    'Ten seconds after brushing and the coffee-breath feeling is gone. Sturdy, no sharp edges.',
    5,
    '2026-02-02',
    true,
  ],
  [
    PRODUCT_2PACK,
    'rev_01c5p4',
    'Marta L.',
    'Good, a little wide',
    'Works well, but the loop is wide for a small mouth; I hold it closer to the end. Would still buy again.',
    4,
    '2026-01-19',
    true,
  ],
  [
    PRODUCT_2PACK,
    'rev_01d8q1',
    'Tom W.',
    'Two is the right number',
    "One lives at home, one at my partner's. Steel still looks new after four months in the dishwasher.",
    5,
    '2025-12-05',
    false,
  ],
  [
    PRODUCT_2PACK,
    'rev_01e3r7',
    'Aisha B.',
    'Takes a week to get used to',
    'Gagged the first few days, fine once I learned to start further forward. Does the job.',
    4,
    '2025-11-22',
    true,
  ],
  [
    PRODUCT_TRAVEL,
    'rev_01f6s2',
    'Kenji N.',
    'The cases are the point',
    'I travel weekly and the vented case means it is dry by the time I unpack. Fits next to my toothbrush.',
    5,
    '2026-04-01',
    true,
  ],
  [
    PRODUCT_TRAVEL,
    'rev_01g9t5',
    'Sophie R.',
    'Nice set, case clasp is stiff',
    'Scrapers are excellent. The case clasp was stiff out of the box and loosened after a week.',
    4,
    '2026-02-27',
    true,
  ],
  [
    PRODUCT_TRAVEL,
    'rev_01h4u8',
    'Luis G.',
    'Gift for my parents',
    'Bought this for my parents, who now refuse to go back to plastic. Arrived in four days.',
    5,
    '2026-01-08',
    false,
  ],
  [
    PRODUCT_TRAVEL,
    'rev_01j7v3',
    'Hannah M.',
    'Okay',
    'Does what it says. Honestly a spoon works nearly as well, but this is nicer to hold.',
    3,
    '2025-10-30',
    true,
  ],
].map(([product_id, id, author, title, quote, rating, review_date, verified]) => ({
  id,
  product_id,
  author,
  title,
  quote,
  rating,
  review_date,
  verified,
}));

// Promo codes. 10OFF is the one in use; the others exist so every rejection reason can be seen (and tested).
const promotions = [
  {
    code: '10OFF',
    kind: 'percentage',
    value: 1000,
    currency_code: null,
    min_subtotal: null,
    starts_at: null,
    ends_at: null,
    usage_limit: null,
    times_redeemed: 0,
  },
  {
    code: 'WELCOME5',
    kind: 'fixed',
    value: 500,
    currency_code: 'usd',
    min_subtotal: 2000,
    starts_at: null,
    ends_at: null,
    usage_limit: null,
    times_redeemed: 0,
  },
  {
    code: 'SPRING20',
    kind: 'percentage',
    value: 2000,
    currency_code: null,
    min_subtotal: null,
    starts_at: '2026-03-01T00:00:00Z',
    ends_at: '2026-06-01T00:00:00Z',
    usage_limit: null,
    times_redeemed: 0,
  },
  {
    code: 'LAUNCH50',
    kind: 'percentage',
    value: 5000,
    currency_code: null,
    min_subtotal: null,
    starts_at: null,
    ends_at: null,
    usage_limit: 100,
    times_redeemed: 100,
  },
  {
    code: 'NEWYEAR27',
    kind: 'percentage',
    value: 1500,
    currency_code: null,
    min_subtotal: null,
    starts_at: '2027-01-01T00:00:00Z',
    ends_at: '2027-01-31T00:00:00Z',
    usage_limit: null,
    times_redeemed: 0,
  },
];

async function insertOnce(db: Knex, table: string, rows: object[], key: string | string[]): Promise<void> {
  if (rows.length)
    await db(table)
      .insert(rows)
      .onConflict(typeof key === 'string' ? [key] : key)
      .ignore();
}

export async function seedStore(db: Knex): Promise<void> {
  await db.transaction(async (trx) => {
    await insertOnce(trx, 'regions', regions, 'id');
    await insertOnce(trx, 'region_countries', regionCountries, ['region_id', 'iso_2']);
    await insertOnce(trx, 'collections', collections, 'id');
    await insertOnce(trx, 'categories', categories, 'id');
    await insertOnce(trx, 'products', products, 'id');
    await insertOnce(trx, 'product_categories', productCategories, ['product_id', 'category_id']);
    await insertOnce(trx, 'variants', variants, 'id');
    const priceRows = Object.entries(prices).flatMap(([variant_id, byRegion]) =>
      Object.entries(byRegion).map(([region_id, amount]) => ({ variant_id, region_id, amount })),
    );
    await insertOnce(trx, 'variant_prices', priceRows, ['variant_id', 'region_id']);
    await insertOnce(trx, 'reviews', reviews, 'id');
    await insertOnce(trx, 'promotions', promotions, 'code');
    await insertOnce(trx, 'tax_rates', taxRates, 'id');
    await insertOnce(trx, 'shipping_options', shippingOptions, ['region_id', 'code']);
  });
}
