// Catalogue queries. Rows come back in storage terms (minor units); src/domain/catalog.ts shapes them for the API.
import type { components } from '../../../codegen/types.js';
import type { ProductRow, RegionRow, VariantRow } from '../../domain/catalog.js';
import type { PurchasableVariantRow } from '../../domain/cart-items.js';
import { asPrepared, batchedPerDatabase, runPrepared, type Db } from '../knex.js';
import { keyRecordOf, type IdempotencyRecord } from './idempotency.js';
import { protocolRecordOf, type StoredAnswer } from './protocol-idempotency.js';
import { promotionsOf, type PromotionRow } from './promotions.js';
import type { Promotion } from '../../domain/promotions.js';

// The records the domain shapes are its own types; repositories return them.
export type { ProductRow, RegionRow, VariantRow, PurchasableVariantRow };

export interface CountryRow {
  region_id: string;
  iso_2: string;
  display_name: string;
}

/** Reviews are selected in exactly the contract's shape (the date formatted by the database). */
export type ReviewRow = components['schemas']['Review'];

export interface ProductFilter {
  handle?: string;
  ids?: string[];
}

export const REGION_COLUMNS = [
  'id',
  'name',
  'currency_code',
  'is_default',
  'tax_rate_bps',
  'shipping_amount',
  'free_shipping_threshold',
];

/** The region with that id, or the default one: two prepared statements (checkout looks a region up on every call). */
/** The region with this id, or the default region when no id is given: one statement text for both. */
function regionQuery(db: Db, id: string | undefined) {
  return db('regions')
    .select(REGION_COLUMNS)
    .whereRaw('id = ? or (?::text is null and is_default)', [id ?? null, id ?? null])
    .limit(1);
}

export async function findRegion(db: Db, id: string | undefined): Promise<RegionRow | undefined> {
  const [region] = (await asPrepared('region', regionQuery(db, id))) as RegionRow[];
  return region;
}

/** Every region in rank order, each with its countries (by display name), as JSON from one statement. */
const REGIONS_WITH_COUNTRIES = `select ${REGION_COLUMNS.join(', ')},
  (select coalesce(json_agg(json_build_object('iso_2', c.iso_2, 'display_name', c.display_name)
    order by c.display_name), '[]') from region_countries as c where c.region_id = regions.id) as countries
from regions order by rank`;

/** The regions and their countries in one round trip (a cache-missing read of the regions costs one statement). */
export async function listRegionsWithCountries(db: Db): Promise<{ regions: RegionRow[]; countries: CountryRow[] }> {
  const rows = await runPrepared<RegionRow & { countries: Array<Omit<CountryRow, 'region_id'>> }>(
    db,
    'regions_with_countries',
    REGIONS_WITH_COUNTRIES,
    [],
  );
  const regions = rows.map(({ countries: _countries, ...region }) => region);
  const countries = rows.flatMap((region) => region.countries.map((country) => ({ region_id: region.id, ...country })));
  return { regions, countries };
}

/** A product with its variants (in catalogue order; absent unless asked for) priced in the page's region. */
export interface ProductWithVariants extends ProductRow {
  variants: VariantRow[] | null;
}

/** What a page of products reads: its region (or undefined: unknown), the matching count and the page's products. */
export interface ProductPage {
  region: RegionRow | undefined;
  count: number;
  products: ProductWithVariants[];
}

/**
 * A page of products, read in one statement: the region ($1, or the default when null), the products matching the
 * filter ($2 handle, $3 ids, each null for none) counted and paged ($4 limit, $5 offset) in catalogue order, and, when
 * $6, each one's variants priced in that region. Text fixed whatever the arguments, so it runs prepared.
 */
const PRODUCT_PAGE = `with region as (
  select ${REGION_COLUMNS.join(', ')} from regions where id = $1 or ($1::text is null and is_default) limit 1
), matching as (
  select id, title, handle, description, material, thumbnail, collection_id, rank from products
  where published and ($2::text is null or handle = $2) and ($3::text[] is null or id = any($3::text[]))
), page as (
  select * from matching order by rank, id limit $4 offset $5
)
select (select row_to_json(region) from region) as region,
  (select count(*)::int from matching) as count,
  (select coalesce(json_agg(json_build_object('id', p.id, 'title', p.title, 'handle', p.handle,
      'description', p.description, 'material', p.material, 'thumbnail', p.thumbnail,
      'collection_id', p.collection_id,
      'variants', case when $6::boolean then (
        select coalesce(json_agg(json_build_object('id', v.id, 'product_id', v.product_id, 'title', v.title,
            'sku', v.sku, 'manage_inventory', v.manage_inventory, 'allow_backorder', v.allow_backorder,
            'inventory_quantity', v.inventory_quantity, 'price_amount', vp.amount) order by v.rank, v.id), '[]')
        from variants as v
        left join variant_prices as vp on vp.variant_id = v.id and vp.region_id = (select id from region)
        where v.product_id = p.id) end
    ) order by p.rank, p.id), '[]') from page as p) as products`;

/**
 * A page of products with what presenting it needs, in one round trip: a cache-missing catalogue read costs the
 * database one statement, not the four (region, rows, count, variants) it once sent.
 */
export async function readProductPage(
  db: Db,
  query: { regionId: string | undefined; filter: ProductFilter; limit: number; offset: number; variants: boolean },
): Promise<ProductPage> {
  const [row] = await runPrepared<{ region: RegionRow | null; count: number; products: ProductWithVariants[] }>(
    db,
    'product_page',
    PRODUCT_PAGE,
    [
      query.regionId ?? null,
      query.filter.handle ?? null,
      query.filter.ids ?? null,
      query.limit,
      query.offset,
      query.variants,
    ],
  );
  return { region: row?.region ?? undefined, count: Number(row?.count ?? 0), products: row?.products ?? [] };
}

/**
 * The reviews (all, or one product's), newest first, in exactly the contract's shape, with their count and mean rating:
 * one statement ($1: the product id, or null for every review).
 */
const REVIEWS = `with scoped as (
  select id, product_id, author, title, quote, rating, verified, review_date from reviews
  where $1::text is null or product_id = $1
)
select (select coalesce(json_agg(json_build_object('id', id, 'product_id', product_id, 'author', author,
    'title', title, 'quote', quote, 'rating', rating, 'verified', verified,
    'review_date', to_char(review_date, 'YYYY-MM-DD')) order by review_date desc, id), '[]') from scoped) as rows,
  (select count(*)::int from scoped) as count,
  (select coalesce(round(avg(rating)::numeric, 2), 0)::float8 from scoped) as average`;

export async function listReviewRows(
  db: Db,
  productId: string | undefined,
): Promise<{ rows: ReviewRow[]; count: number; average: number }> {
  const [result] = await runPrepared<{ rows: ReviewRow[]; count: number; average: number }>(db, 'reviews', REVIEWS, [
    productId ?? null,
  ]);
  return { rows: result?.rows ?? [], count: Number(result?.count ?? 0), average: Number(result?.average ?? 0) };
}

export async function listCollectionRows(
  db: Db,
  handle: string | undefined,
): Promise<{ id: string; title: string; handle: string }[]> {
  const query = db('collections').select('id', 'title', 'handle').orderBy('title');
  return handle === undefined ? query : query.where({ handle });
}

export interface VariantReferences {
  variantIds: string[];
  skus: string[];
  productHandles: string[];
}

/** The order candidates come in: the catalogue's. */
const PURCHASABLE_ORDER = ['p.rank', 'v.rank', 'v.id'];

/**
 * Every variant matching any of the references (variant ids, SKUs, product handles), priced in the region `regionId`,
 * in one prepared statement.
 */
export async function findPurchasableVariants(
  db: Db,
  refs: VariantReferences,
  regionId: string,
): Promise<PurchasableVariantRow[]> {
  if (!refs.variantIds.length && !refs.skus.length && !refs.productHandles.length) return [];
  const query = db('variants as v')
    // An unpublished product's variants cannot be bought: as if unknown.
    .join('products as p', function joinPublished() {
      this.on('p.id', 'v.product_id').andOn('p.published', db.raw('true'));
    })
    .leftJoin('variant_prices as vp', function joinPrice() {
      this.on('vp.variant_id', 'v.id').andOnVal('vp.region_id', regionId);
    })
    // Three array parameters, empty or not: the text stays the same whatever the references.
    .where((where) =>
      where
        .whereRaw('v.id = any(?::text[])', [refs.variantIds])
        .orWhereRaw('v.sku = any(?::text[])', [refs.skus])
        .orWhereRaw('p.handle = any(?::text[])', [refs.productHandles]),
    )
    .select('v.id', 'v.sku', 'v.title', 'v.manage_inventory', 'v.allow_backorder', 'v.inventory_quantity', {
      product_title: 'p.title',
      product_handle: 'p.handle',
      price_amount: 'vp.amount',
    })
    .orderBy(PURCHASABLE_ORDER);
  return asPrepared('purchasable_variants', query);
}

/** A variant as a create reads it: as checkout needs it, with what a protocol session shows of it. */
export interface CreateVariantRow extends PurchasableVariantRow {
  product_id: string;
  thumbnail: string | null;
}

/**
 * What a new session is built from, whichever surface asks: its region, the variants its references name priced there
 * and the promotions among its codes; for a protocol's market, whether its country is served and every region's
 * currency.
 */
export interface NewCartReads {
  region: RegionRow | undefined;
  /** Whether the market's country is one a region serves (false without a country). */
  countryServed: boolean;
  /** Every region's currency, in rank order (what an unsupported currency is answered with). */
  currencies: string[];
  variants: CreateVariantRow[];
  promotions: Map<string, Promotion>;
  /** Under an Idempotency-Key, the key's record (undefined when it has none). */
  keyRecord?: IdempotencyRecord | undefined;
  /** Under a protocol's key, the key's record (undefined when it has none). */
  protocolRecord?: StoredAnswer | undefined;
  /** The catalogue's version these reads saw (see insertCart's `pricedAt`). */
  catalogVersion: string;
}

/** Under an Idempotency-Key, the key whose record the create's read brings. */
export interface KeyToRead {
  scope: string;
  key: string;
}

/**
 * An ACP or UCP create's market, read instead of a region id: the region selling in `currency` (lower case), and no
 * other; without one, the region serving `country` (lower case), else the default region.
 */
export interface MarketToRead {
  country: string | null;
  currency: string | null;
}

/**
 * What one create reads: its region (that id, or the default; or its market's), its references, its codes (canonical
 * form), and its key: a checkout key's record (`key`) or a protocol key's (`protocolKey`).
 */
export interface NewCartRead {
  regionId: string | undefined;
  market?: MarketToRead | undefined;
  refs: VariantReferences;
  codes: string[];
  key?: KeyToRead | undefined;
  protocolKey?: KeyToRead | undefined;
}

/** How NEW_CART_READS tells the kinds of reference apart ($10). */
const REFERENCE_KINDS = { variantIds: 'id', skus: 'sku', productHandles: 'handle' } as const;

/**
 * The read of every create, REST's and the protocols', for one create or many ($1–$7: each create's region id,
 * country, currency, checkout key scope and key, protocol key scope and key, null when it has none; $8–$10: every
 * reference as its create's position, kind and value; $11–$12: every code as its create's position and code): for
 * each create, one row with its position, its region, whether its country is served, every region's currency (in
 * rank order, what an unsupported currency is answered with), the variants its references name priced in that region
 * (in PURCHASABLE_ORDER), the promotions among its codes and its key's record. The market picks the region as the
 * protocols document it: the currency's region and no other; else the country's (the first by region and name), else
 * the default. Each create's rows are picked out by its position, so creates in one statement never see each other's.
 * The text is fixed whatever the batch holds, and the arrays are read through sub-selects, as SESSION_READ reads its
 * ids, so that PostgreSQL keeps one generic plan instead of planning each execution anew.
 */
export const NEW_CART_READS = `with member as (
  select * from unnest((select $1::text[]), (select $2::text[]), (select $3::text[]), (select $4::text[]),
    (select $5::text[]), (select $6::text[]), (select $7::text[])) with ordinality
    as member (region_id, country, currency, key_scope, key, protocol_key_scope, protocol_key, position)
), reference as (
  select * from unnest((select $8::int[]), (select $9::text[]), (select $10::text[])) as reference (owner, kind, value)
), requested_code as (
  select * from unnest((select $11::int[]), (select $12::text[])) as requested_code (owner, code)
)
select member.position, region.json as region, (select version from catalog_version)::text as catalog_version,
  member.country is not null and exists (select from region_countries where lower(iso_2) = member.country)
    as country_served,
  (select array(select currency_code from regions order by rank)) as currencies,
  (select coalesce(json_agg(json_build_object('id', v.id, 'sku', v.sku, 'title', v.title,
      'manage_inventory', v.manage_inventory, 'allow_backorder', v.allow_backorder,
      'inventory_quantity', v.inventory_quantity, 'product_id', v.product_id, 'product_title', p.title,
      'product_handle', p.handle, 'thumbnail', p.thumbnail, 'price_amount', vp.amount
    ) order by ${PURCHASABLE_ORDER.join(', ')}), '[]')
    from variants as v
    join products as p on p.id = v.product_id and p.published
    left join variant_prices as vp on vp.variant_id = v.id and vp.region_id = region.id
    where v.id = any(array(select value from reference where owner = member.position and kind = '${REFERENCE_KINDS.variantIds}'))
      or v.sku = any(array(select value from reference where owner = member.position and kind = '${REFERENCE_KINDS.skus}'))
      or p.handle = any(array(select value from reference where owner = member.position and kind = '${REFERENCE_KINDS.productHandles}'))
  ) as variants,
  (select coalesce(json_agg(promotion), '[]') from promotions as promotion
    where promotion.code = any(array(select code from requested_code where owner = member.position))) as promotions,
  ${keyRecordOf('member.key_scope', 'member.key')} as key_record,
  ${protocolRecordOf('member.protocol_key_scope', 'member.protocol_key')} as protocol_record
from member
cross join lateral (
  select case when member.currency is not null
    then (select id from regions where currency_code = member.currency order by rank limit 1)
    else coalesce(member.region_id,
      (select region_id from region_countries where lower(iso_2) = member.country order by region_id, display_name limit 1),
      (select id from regions where is_default))
  end as id
) as chosen
left join lateral (
  select row_to_json(region) as json, region.id from (
    select ${REGION_COLUMNS.join(', ')} from regions where id = chosen.id
  ) as region
) as region on true`;

/** A create's row of NEW_CART_READS. */
export interface CreateReads {
  region: RegionRow | null;
  /** Whether the market's country is one a region serves (false without a country). */
  country_served: boolean;
  currencies: string[];
  variants: CreateVariantRow[];
  promotions: PromotionRow[];
  key_record: IdempotencyRecord | null;
  protocol_record: StoredAnswer | null;
  /** The catalogue's version (catalog_version) these reads saw, a bigint as text. */
  catalog_version: string;
}

interface NewCartReadsRow extends CreateReads {
  position: number;
}

/** NEW_CART_READS's arguments for these creates (positions count from 1, as `with ordinality` does). */
function newCartReadsBindings(reads: readonly NewCartRead[]): unknown[][] {
  const owners: number[] = [];
  const kinds: string[] = [];
  const values: string[] = [];
  const codeOwners: number[] = [];
  const codes: string[] = [];
  reads.forEach((read, index) => {
    for (const [field, kind] of Object.entries(REFERENCE_KINDS) as Array<[keyof VariantReferences, string]>)
      for (const value of read.refs[field]) {
        owners.push(index + 1);
        kinds.push(kind);
        values.push(value);
      }
    for (const code of read.codes) {
      codeOwners.push(index + 1);
      codes.push(code);
    }
  });
  return [
    reads.map((read) => read.regionId ?? null),
    reads.map((read) => read.market?.country ?? null),
    reads.map((read) => read.market?.currency ?? null),
    reads.map((read) => read.key?.scope ?? null),
    reads.map((read) => read.key?.key ?? null),
    reads.map((read) => read.protocolKey?.scope ?? null),
    reads.map((read) => read.protocolKey?.key ?? null),
    owners,
    kinds,
    values,
    codeOwners,
    codes,
  ];
}

/** Each create's reads, in the creates' order, from one statement. */
async function readCreates(db: Db, reads: readonly NewCartRead[]): Promise<CreateReads[]> {
  const rows = await runPrepared<NewCartReadsRow>(db, 'new_cart_reads', NEW_CART_READS, newCartReadsBindings(reads));
  const byPosition = new Map(rows.map((row) => [row.position, row]));
  return reads.map((_read, index) => byPosition.get(index + 1)!);
}

/**
 * Create reads outside a transaction, REST's and the protocols' alike, are batched per database as session reads are
 * (see src/db/batching.ts): a lone read goes at once; while a read statement runs, further reads queue, and the next
 * statement reads them all (at most MAX_CREATES_PER_READ). One statement at a time rather than two: at 32
 * connections, service and PostgreSQL CPU per create 0.58 / 0.24–0.33 ms with two, 0.37–0.39 / 0.15–0.21 ms with
 * one, and a lower p99 (alternating runs).
 */
const MAX_CREATE_READS_IN_FLIGHT = 1;
const MAX_CREATES_PER_READ = 32;
const createReader = batchedPerDatabase<NewCartRead, CreateReads>('create_reads', (db) => ({
  one: async (read) => (await readCreates(db, [read]))[0]!,
  many: (reads) => readCreates(db, reads),
  maxBatch: MAX_CREATES_PER_READ,
  maxInFlight: MAX_CREATE_READS_IN_FLIGHT,
}));

/**
 * What a create reads (NEW_CART_READS), in one prepared statement of fixed text, so creating a session costs this
 * round trip and the insert. Inside a transaction it runs on the transaction's connection; otherwise in a statement
 * that may carry other creates' reads too (always one that starts after this call, so it sees every write committed
 * before).
 */
export function findCreateReads(db: Db, read: NewCartRead): Promise<CreateReads> {
  return db.isTransaction ? readCreates(db, [read]).then(([reads]) => reads!) : createReader(db)(read);
}

/**
 * A create's reads (findCreateReads), whichever surface asks: the region (that id, or the market's, or the default),
 * the variants the references name priced in it, the promotions among the codes and, under a key, the key's record.
 */
export async function findNewCartReads(db: Db, read: NewCartRead): Promise<NewCartReads> {
  const row = await findCreateReads(db, read);
  return {
    region: row.region ?? undefined,
    countryServed: row.country_served,
    currencies: row.currencies,
    variants: row.variants,
    promotions: promotionsOf(row.promotions),
    catalogVersion: row.catalog_version,
    ...(read.key ? { keyRecord: row.key_record ?? undefined } : {}),
    ...(read.protocolKey ? { protocolRecord: row.protocol_record ?? undefined } : {}),
  };
}
