// Catalogue queries. Rows come back in storage terms (minor units); src/domain/catalog.ts shapes them for the API.
import type { components } from '../../../codegen/types.js';
import type { Knex } from 'knex';
import { asPrepared, runPrepared, type Db } from '../knex.js';
import { keyRecordColumn, type IdempotencyRecord } from './idempotency.js';
import { promotionsByCode, promotionsOf, type PromotionRow } from './promotions.js';
import type { Promotion } from '../../domain/promotions.js';

export interface RegionRow {
  id: string;
  name: string;
  currency_code: string;
  is_default: boolean;
  tax_rate_bps: number;
  shipping_amount: number;
  free_shipping_threshold: number | null;
}

export interface CountryRow {
  region_id: string;
  iso_2: string;
  display_name: string;
}

export interface ProductRow {
  id: string;
  title: string;
  handle: string;
  description: string | null;
  material: string | null;
  thumbnail: string | null;
  collection_id: string | null;
}

export interface VariantRow {
  id: string;
  product_id: string;
  title: string;
  sku: string | null;
  manage_inventory: boolean;
  allow_backorder: boolean;
  inventory_quantity: number;
  /** Minor units in the requested region; null when the variant has no price there. */
  price_amount: number | null;
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

export async function listRegionsWithCountries(db: Db): Promise<{ regions: RegionRow[]; countries: CountryRow[] }> {
  const [regions, countries] = await Promise.all([
    db('regions').select(REGION_COLUMNS).orderBy('rank') as Promise<RegionRow[]>,
    db<CountryRow>('region_countries')
      .select('region_id', 'iso_2', 'display_name')
      .orderBy(['region_id', 'display_name']),
  ]);
  return { regions, countries };
}

function filtered(db: Db, filter: ProductFilter) {
  const query = db<ProductRow>('products');
  if (filter.handle !== undefined) query.where('handle', filter.handle);
  if (filter.ids !== undefined) query.whereIn('id', filter.ids);
  return query;
}

export async function listProductRows(
  db: Db,
  filter: ProductFilter,
  page: { limit: number; offset: number },
): Promise<{ rows: ProductRow[]; count: number }> {
  const [rows, total] = await Promise.all([
    filtered(db, filter)
      .select('id', 'title', 'handle', 'description', 'material', 'thumbnail', 'collection_id')
      .orderBy(['rank', 'id'])
      .limit(page.limit)
      .offset(page.offset),
    filtered(db, filter).count<{ count: number }[]>({ count: '*' }),
  ]);
  return { rows, count: Number(total[0]?.count ?? 0) };
}

export async function listVariantRows(db: Db, productIds: string[], regionId: string): Promise<VariantRow[]> {
  if (productIds.length === 0) return [];
  return db('variants as v')
    .leftJoin('variant_prices as p', function joinPrice() {
      this.on('p.variant_id', 'v.id').andOnVal('p.region_id', regionId);
    })
    .whereIn('v.product_id', productIds)
    .orderBy(['v.product_id', 'v.rank', 'v.id'])
    .select(
      'v.id',
      'v.product_id',
      'v.title',
      'v.sku',
      'v.manage_inventory',
      'v.allow_backorder',
      'v.inventory_quantity',
      { price_amount: 'p.amount' },
    );
}

export async function listReviewRows(
  db: Db,
  productId: string | undefined,
): Promise<{ rows: ReviewRow[]; count: number; average: number }> {
  const scoped = () => (productId === undefined ? db('reviews') : db('reviews').where('product_id', productId));
  const [rows, stats] = await Promise.all([
    scoped()
      .select(
        'id',
        'product_id',
        'author',
        'title',
        'quote',
        'rating',
        'verified',
        db.raw(`to_char(review_date, 'YYYY-MM-DD') as review_date`),
      )
      .orderBy([{ column: 'review_date', order: 'desc' }, 'id']),
    scoped().select(
      db.raw('count(*)::int as count'),
      db.raw('coalesce(round(avg(rating)::numeric, 2), 0)::float8 as average'),
    ),
  ]);
  return { rows, count: Number(stats[0]?.count ?? 0), average: Number(stats[0]?.average ?? 0) };
}

export async function listCollectionRows(
  db: Db,
  handle: string | undefined,
): Promise<{ id: string; title: string; handle: string }[]> {
  const query = db('collections').select('id', 'title', 'handle').orderBy('title');
  return handle === undefined ? query : query.where({ handle });
}

/** A variant as checkout needs it: how it can be referred to, its stock and its price in one region. */
export interface PurchasableVariantRow {
  id: string;
  sku: string | null;
  title: string;
  product_title: string;
  product_handle: string;
  manage_inventory: boolean;
  allow_backorder: boolean;
  inventory_quantity: number;
  price_amount: number | null;
}

export interface VariantReferences {
  variantIds: string[];
  skus: string[];
  productHandles: string[];
}

/** Every variant matching any of the references, priced in the region `regionId` evaluates to. */
function purchasableVariants(db: Db, refs: VariantReferences, regionId: Knex.Raw) {
  return (
    db('variants as v')
      .join('products as p', 'p.id', 'v.product_id')
      .leftJoin('variant_prices as vp', function joinPrice() {
        this.on('vp.variant_id', 'v.id').andOn('vp.region_id', regionId);
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
  );
}

const PURCHASABLE_ORDER = ['p.rank', 'v.rank', 'v.id'];

/** Every variant matching any of the references (variant ids, SKUs, product handles), in one prepared statement. */
export async function findPurchasableVariants(
  db: Db,
  refs: VariantReferences,
  regionId: string,
): Promise<PurchasableVariantRow[]> {
  if (!refs.variantIds.length && !refs.skus.length && !refs.productHandles.length) return [];
  const query = purchasableVariants(db, refs, db.raw('?', [regionId])).orderBy(PURCHASABLE_ORDER);
  return asPrepared('purchasable_variants', query);
}

/** What a new cart is built from, exactly as findRegion, findPurchasableVariants and findPromotions give it. */
export interface NewCartReads {
  region: RegionRow | undefined;
  variants: PurchasableVariantRow[];
  promotions: Map<string, Promotion>;
  /** Under an Idempotency-Key, the key's record (undefined when it has none). */
  keyRecord?: IdempotencyRecord | undefined;
}

/** Under an Idempotency-Key, the key whose record the create's read brings. */
export interface KeyToRead {
  scope: string;
  key: string;
}

/** The create's read as a query (see findNewCartReads). */
function newCartReadsQuery(
  db: Db,
  regionId: string | null,
  refs: VariantReferences,
  codes: string[],
  key: KeyToRead | undefined,
) {
  const region = regionQuery(db, regionId ?? undefined);
  // json_agg keeps an order only when told; the ordinal says it, and is dropped from the rows it aggregates.
  const variants = purchasableVariants(db, refs, db.raw('(select id from region)')).select({
    ordinal: db.raw(`row_number() over (order by ${PURCHASABLE_ORDER.join(', ')})`),
  });
  return db.with('region', region).select({
    region: db.raw('(select row_to_json(region) from region)'),
    variants: db.raw(
      `(select coalesce(jsonb_agg(to_jsonb(candidate) - 'ordinal' order by candidate.ordinal), '[]') from ? as candidate)`,
      [variants],
    ),
    promotions: db.raw(`(select coalesce(json_agg(promotion), '[]') from ? as promotion)`, [
      promotionsByCode(db, codes),
    ]),
    ...(key ? { key_record: keyRecordColumn(db, key.scope, key.key) } : {}),
  });
}

/** The create read's arguments in the order its text binds them. */
function newCartReadsBindings(
  regionId: string | null,
  refs: VariantReferences,
  codes: string[],
  key: KeyToRead | undefined,
): unknown[] {
  return [
    regionId,
    regionId,
    1, // the region query's limit
    refs.variantIds,
    refs.skus,
    refs.productHandles,
    codes,
    ...(key ? [key.scope, key.key] : []),
  ];
}

const newCartReadsTexts = new WeakMap<Db, Map<boolean, string>>();

/**
 * The create read's text in PostgreSQL's own form, compiled from the query once per database and kind (with or
 * without a key): building and compiling it on every create was a third of the garbage a create made. Compiled with
 * a distinct marker for each argument, so that a query whose bindings ever come in another order fails at once.
 */
function newCartReadsText(db: Db, withKey: boolean): string {
  let texts = newCartReadsTexts.get(db);
  if (!texts) newCartReadsTexts.set(db, (texts = new Map()));
  let text = texts.get(withKey);
  if (text === undefined) {
    const refs = { variantIds: ['ids'], skus: ['skus'], productHandles: ['handles'] };
    const key = withKey ? { scope: 'scope', key: 'key' } : undefined;
    const compiled = newCartReadsQuery(db, 'region', refs, ['codes'], key).toSQL().toNative();
    if (JSON.stringify(compiled.bindings) !== JSON.stringify(newCartReadsBindings('region', refs, ['codes'], key)))
      throw new Error(`the create's read binds ${JSON.stringify(compiled.bindings)}, not in the expected order`);
    text = compiled.sql;
    texts.set(withKey, text);
  }
  return text;
}

/**
 * The region (that id, or the default), the variants the references name priced in it, the promotions among `codes`
 * (canonical form) and, under an Idempotency-Key, the key's record: one prepared statement of fixed text, so creating
 * a cart costs this round trip and the insert.
 */
export async function findNewCartReads(
  db: Db,
  regionId: string | undefined,
  refs: VariantReferences,
  codes: string[],
  key?: KeyToRead,
): Promise<NewCartReads> {
  const [row] = await runPrepared<{
    region: RegionRow | null;
    variants: PurchasableVariantRow[];
    promotions: PromotionRow[];
    key_record?: IdempotencyRecord | null;
  }>(
    db,
    key ? 'new_cart_reads_with_key' : 'new_cart_reads',
    newCartReadsText(db, key !== undefined),
    newCartReadsBindings(regionId ?? null, refs, codes, key),
  );
  return {
    region: row?.region ?? undefined,
    variants: row?.variants ?? [],
    promotions: promotionsOf(row?.promotions ?? []),
    keyRecord: row?.key_record ?? undefined,
  };
}
