// The catalogue as UCP's catalog capabilities serve it (dev.ucp.shopping.catalog.search and .lookup): the same
// products, variants and region prices as the REST catalogue, the agent API and the ACP feed (one product page read,
// src/db/repositories/catalog.ts, and the agent API's text and category search), priced in the region of the buyer's
// country (the default region when none is named or none serves it), in integer minor units.
import type { Db } from '../db/knex.js';
import * as catalog from '../db/repositories/catalog.js';
import * as search from '../db/repositories/agent-catalog.js';
import type { ProductWithVariants } from '../db/repositories/catalog.js';
import type { RegionRow, VariantRow } from '../domain/catalog.js';
import { ucpMessage, type UcpMessage } from '../domain/ucp-checkout.js';
import { pricedVariants, toUcpProduct, type UcpProduct } from '../domain/ucp-shopping.js';

/** The most products one search considers (the whole catalogue, bounded as the ACP feed is), before paging. */
export const SEARCH_PRODUCT_LIMIT = 1000;
/** Products on one page of search results: 10 unless asked, at most 50. */
export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 50;

export interface CatalogContext {
  address_country?: string;
  currency?: string;
}

/** The region priced in: the country's, or the default (with a message saying so when a country was named). */
async function regionFor(
  db: Db,
  context: CatalogContext | undefined,
): Promise<{ region: RegionRow; notes: UcpMessage[] }> {
  const { regions, countries } = await catalog.listRegionsWithCountries(db);
  const fallback = (regions.find((region) => region.is_default) ?? regions[0])!;
  const wanted = context?.address_country?.toUpperCase();
  if (!wanted) return { region: fallback, notes: [] };
  const served = countries.find((country) => country.iso_2.toUpperCase() === wanted);
  const region = served && regions.find((candidate) => candidate.id === served.region_id);
  if (region) return { region, notes: [] };
  return {
    region: fallback,
    notes: [
      ucpMessage({
        type: 'info',
        code: 'market_defaulted',
        path: '$.context.address_country',
        content: `This store does not sell to ${context!.address_country}; prices are in the default market (${fallback.currency_code.toUpperCase()}).`,
      }),
    ],
  };
}

async function productsIn(db: Db, region: RegionRow, ids: string[] | undefined): Promise<ProductWithVariants[]> {
  if (ids && !ids.length) return [];
  const page = await catalog.readProductPage(db, {
    regionId: region.id,
    filter: { ids },
    limit: SEARCH_PRODUCT_LIMIT,
    offset: 0,
    variants: true,
  });
  return page.products;
}

/** The filters of a catalog request (shopping/types/search_filters.json; more keys are allowed, extension-defined). */
export interface CatalogFilters {
  categories?: string[];
  price?: PriceBounds;
  [other: string]: unknown;
}

interface PriceBounds {
  min?: number;
  max?: number;
}

/** The filters this store applies: search_filters.json's own (the fulfillment extension's are not offered on catalog). */
const HONOURED_FILTERS = new Set(['categories', 'price']);

/**
 * Every filter this store cannot honour (an extension's, such as 2026-08-25 fulfillment's `fulfills_to` and
 * `methods`, or any other key): a recoverable error at its path; it is not applied.
 */
function unsupportedFilters(filters: CatalogFilters | undefined): UcpMessage[] {
  return Object.keys(filters ?? {})
    .filter((key) => !HONOURED_FILTERS.has(key))
    .map((key) =>
      ucpMessage({
        type: 'error',
        code: 'filter_unsupported',
        severity: 'recoverable',
        path: `$.filters${/^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`,
        content: `This store does not filter by ${key} (it filters by categories and price); the results are not narrowed by it. Send the request without it.`,
      }),
    );
}

/**
 * The price bounds to apply, denominated in `context.currency` (price_filter.json): applied when that is the
 * presentment currency or is not named; in another currency, not applied, with a warning (this store converts nothing).
 */
function priceBounds(
  filters: CatalogFilters | undefined,
  context: CatalogContext | undefined,
  region: RegionRow,
  notes: UcpMessage[],
): PriceBounds | undefined {
  const price = filters?.price;
  if (!price || (price.min === undefined && price.max === undefined)) return undefined;
  const currency = context?.currency;
  if (currency && currency.toLowerCase() !== region.currency_code.toLowerCase()) {
    notes.push(
      ucpMessage({
        type: 'warning',
        code: 'filter_ignored',
        path: '$.filters.price',
        content: `The price filter is in ${currency} but prices here are in ${region.currency_code.toUpperCase()}; it was not applied.`,
      }),
    );
    return undefined;
  }
  return price;
}

/** The ids of the products in any of the categories (ids or handles, with their descendants); undefined for none asked. */
async function categoryProductIds(db: Db, categories: string[] | undefined): Promise<string[] | undefined> {
  if (!categories?.length) return undefined;
  const trees = await Promise.all(categories.map((category) => search.findCategoryTreeIds(db, category)));
  const categoryIds = [...new Set(trees.flat())];
  return search.searchProductIds(db, { categoryIds });
}

/** A variant priced within the bounds (inclusive, minor units). */
function withinPrice(variant: VariantRow & { price_amount: number }, price: PriceBounds): boolean {
  return (
    (price.min === undefined || variant.price_amount >= price.min) &&
    (price.max === undefined || variant.price_amount <= price.max)
  );
}

/** The filters as they narrow products (by category) and variants (by price); products left without variants go. */
interface Narrowing {
  productIds: Set<string> | undefined;
  price: PriceBounds | undefined;
}

async function narrowingOf(
  db: Db,
  filters: CatalogFilters | undefined,
  context: CatalogContext | undefined,
  region: RegionRow,
  notes: UcpMessage[],
): Promise<Narrowing> {
  notes.push(...unsupportedFilters(filters));
  const ids = await categoryProductIds(db, filters?.categories);
  return { productIds: ids && new Set(ids), price: priceBounds(filters, context, region, notes) };
}

function narrowed(products: ProductWithVariants[], narrowing: Narrowing): ProductWithVariants[] {
  const { productIds, price } = narrowing;
  return products.flatMap((product) => {
    if (productIds && !productIds.has(product.id)) return [];
    const variants = pricedVariants(product.variants ?? []).filter((variant) => !price || withinPrice(variant, price));
    return variants.length ? [{ ...product, variants }] : [];
  });
}

export interface SearchRequest {
  query?: string;
  context?: CatalogContext;
  filters?: CatalogFilters;
  /** The offset the request's cursor stands for, and the page size asked. */
  offset: number;
  limit?: number;
}

export interface SearchResult {
  products: UcpProduct[];
  /** The offset of the next page, when there is one. */
  next: number | undefined;
  total: number;
  notes: UcpMessage[];
}

/**
 * Search: every word of `query` in the title or description, in any of the categories (with their descendants); a
 * product is found when one of its variants is within the price filter, and answered with all its variants.
 */
export async function searchUcpCatalog(db: Db, request: SearchRequest): Promise<SearchResult> {
  const { region, notes } = await regionFor(db, request.context);
  const { query } = request;
  const narrowing = await narrowingOf(db, request.filters, request.context, region, notes);
  const { productIds } = narrowing;
  let ids = query?.trim() ? await search.searchProductIds(db, { q: query }) : undefined;
  if (productIds) ids = (ids ?? [...productIds]).filter((id) => productIds.has(id));
  const found = await productsIn(db, region, ids);
  const within = new Set(narrowed(found, narrowing).map((product) => product.id));
  const products = found.flatMap((product) =>
    within.has(product.id) ? (toUcpProduct(product, product.variants ?? [], region.currency_code) ?? []) : [],
  );
  const limit = Math.min(request.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const page = products.slice(request.offset, request.offset + limit);
  const next = request.offset + limit < products.length ? request.offset + limit : undefined;
  return { products: page, next, total: products.length, notes };
}

export interface LookupResult {
  products: UcpProduct[];
  notes: UcpMessage[];
}

type Input = { id: string; match: 'exact' | 'featured' };

/** What one identifier resolves to among `products`: its variants (id or SKU) exactly, its product's featured one. */
function resolve(
  id: string,
  products: ProductWithVariants[],
  byProduct: Array<{ id: string; handle: string }>,
  byVariant: Array<Pick<VariantRow, 'id' | 'sku' | 'product_id'>>,
): Array<[variantId: string, input: Input]> {
  const priced = (productId: string) =>
    pricedVariants(products.find((candidate) => candidate.id === productId)?.variants ?? []);
  const exact = byVariant
    .filter((row) => (row.id === id || row.sku === id) && priced(row.product_id).some((known) => known.id === row.id))
    .map((row): [string, Input] => [row.id, { id, match: 'exact' }]);
  const product = products.find((candidate) =>
    byProduct.some((row) => row.id === candidate.id && (row.id === id || row.handle === id)),
  );
  if (!product) return exact;
  const buyable = priced(product.id);
  const chosen =
    buyable.find((row) => !row.manage_inventory || row.allow_backorder || row.inventory_quantity > 0) ?? buyable[0];
  return chosen ? [...exact, [chosen.id, { id, match: 'featured' }]] : exact;
}

export interface LookupRequest {
  ids: string[];
  context?: CatalogContext;
  filters?: CatalogFilters;
}

/**
 * Lookup by identifier: a product id or handle resolves to its product with its featured variant (the first one that
 * can be bought), a variant id or SKU to that variant (`exact`), among the products and variants the filters leave
 * (categories narrow products, price narrows variants). Products are answered once, in catalogue order, with every
 * identifier that resolved to each variant; an identifier that resolves to nothing is a warning at its index, one the
 * filters left out an info there.
 */
export async function lookupUcpCatalog(db: Db, request: LookupRequest): Promise<LookupResult> {
  const { ids, context } = request;
  const { region, notes } = await regionFor(db, context);
  const narrowing = await narrowingOf(db, request.filters, context, region, notes);
  const [byProduct, byVariant] = await Promise.all([
    search.findProductsByIdOrHandle(db, ids),
    search.findVariantsByIdOrSku(db, ids),
  ]);
  const productIds = [...new Set([...byProduct.map((row) => row.id), ...byVariant.map((row) => row.product_id)])];
  const all = await productsIn(db, region, productIds);
  const products = narrowed(all, narrowing);
  /** Variant id → the request identifiers that resolved to it, and how. */
  const inputs = new Map<string, Input[]>();
  ids.forEach((id, index) => {
    const resolved = resolve(id, products, byProduct, byVariant);
    for (const [variantId, input] of resolved) {
      const list = inputs.get(variantId) ?? [];
      if (!list.some((known) => known.id === input.id)) list.push(input);
      inputs.set(variantId, list);
    }
    if (resolved.length) return;
    const filteredOut = resolve(id, all, byProduct, byVariant).length > 0;
    notes.push(
      filteredOut
        ? ucpMessage({
            type: 'info',
            code: 'filtered_out',
            path: `$.ids[${index}]`,
            content: `${id} is sold here, but not within the filters asked.`,
          })
        : ucpMessage({
            type: 'warning',
            code: 'not_found',
            path: `$.ids[${index}]`,
            content: `No product or variant is sold here as ${id} (product ids and handles, variant ids and SKUs are looked up).`,
          }),
    );
  });
  const answered = products.flatMap((product) => {
    const matched = (product.variants ?? []).filter((variant) => inputs.has(variant.id));
    return (
      toUcpProduct(product, matched, region.currency_code, (variant) => ({ inputs: inputs.get(variant.id) })) ?? []
    );
  });
  return { products: answered, notes };
}

export interface ProductRequest {
  id: string;
  /** Option selections (selected_option.json): this store's one axis is `Variant`, its values the variants. */
  selected?: Array<{ name: string; label: string; id?: string }>;
  context?: CatalogContext;
  filters?: CatalogFilters;
}

export type ProductOutcome =
  | { kind: 'found'; product: UcpProduct; variantId: string | undefined; notes: UcpMessage[] }
  /** No product or variant by that identifier. */
  | { kind: 'not_found' }
  /** The product is sold, but none of its variants is within the filters. */
  | { kind: 'filtered_out'; notes: UcpMessage[] };

/** The option axis of every product here: its variants differ by title alone. */
export const VARIANT_OPTION = 'Variant';

/**
 * One product by product id or handle, or variant id or SKU (that variant then selected), with the variants the
 * filters leave. A selection of the `Variant` axis (by option value id, the variant's id, or by label) selects that
 * variant; a selection that matches no variant left, or names another option, is relaxed (dropped, as
 * get_product_request's `preferences` allow, with one axis nothing to order) with a warning at its path.
 */
export async function findUcpProduct(db: Db, request: ProductRequest): Promise<ProductOutcome> {
  const { id, context } = request;
  const { region, notes } = await regionFor(db, context);
  const narrowing = await narrowingOf(db, request.filters, context, region, notes);
  const [byProduct, byVariant] = await Promise.all([
    search.findProductsByIdOrHandle(db, [id]),
    search.findVariantsByIdOrSku(db, [id]),
  ]);
  const variant = byVariant.find((row) => row.id === id) ?? byVariant[0];
  const productId = byProduct[0]?.id ?? variant?.product_id;
  if (!productId) return { kind: 'not_found' };
  const [found] = await productsIn(db, region, [productId]);
  if (!found || !pricedVariants(found.variants ?? []).length) return { kind: 'not_found' };
  const [kept] = narrowed([found], narrowing);
  const product = kept && toUcpProduct(kept, kept.variants ?? [], region.currency_code);
  if (!product) return { kind: 'filtered_out', notes };
  let variantId = byProduct.length ? undefined : variant?.id;
  (request.selected ?? []).forEach((option, index) => {
    const chosen =
      option.name === VARIANT_OPTION
        ? product.variants.find((candidate) =>
            option.id !== undefined ? candidate.id === option.id : candidate.title === option.label,
          )
        : undefined;
    if (chosen) variantId = chosen.id;
    else
      notes.push(
        ucpMessage({
          type: 'warning',
          code: 'selection_relaxed',
          path: `$.selected[${index}]`,
          content:
            option.name === VARIANT_OPTION
              ? `No variant ${option.label} is sold here within the filters asked; the selection was dropped.`
              : `This product has one option, ${VARIANT_OPTION}, not ${option.name}; the selection was dropped.`,
        }),
      );
  });
  return { kind: 'found', product, variantId, notes };
}
