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
  });
}
