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

export interface SearchRequest {
  query?: string;
  context?: CatalogContext;
  filters?: { categories?: string[]; price?: { min?: number; max?: number } };
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

/** Whether a product has a priced variant within the price filter (bounds inclusive, minor units). */
function withinPrice(variants: VariantRow[], price: { min?: number; max?: number }): boolean {
  return pricedVariants(variants).some(
    (variant) =>
      (price.min === undefined || variant.price_amount >= price.min) &&
      (price.max === undefined || variant.price_amount <= price.max),
  );
}

/** Search: every word of `query` in the title or description, in any of the categories (with their descendants). */
export async function searchUcpCatalog(db: Db, request: SearchRequest): Promise<SearchResult> {
  const { region, notes } = await regionFor(db, request.context);
  const { query, filters = {} } = request;
  let categoryIds: string[] | undefined;
  if (filters.categories?.length) {
    const trees = await Promise.all(filters.categories.map((category) => search.findCategoryTreeIds(db, category)));
    categoryIds = [...new Set(trees.flat())];
  }
  const narrowed = query?.trim() || categoryIds !== undefined;
  const ids = narrowed ? await search.searchProductIds(db, { q: query, categoryIds }) : undefined;
  let found = await productsIn(db, region, ids);
  const { price } = filters;
  if (price && (price.min !== undefined || price.max !== undefined)) {
    const currency = request.context?.currency;
    if (currency && currency.toLowerCase() !== region.currency_code.toLowerCase())
      notes.push(
        ucpMessage({
          type: 'warning',
          code: 'filter_ignored',
          path: '$.filters.price',
          content: `The price filter is in ${currency} but prices here are in ${region.currency_code.toUpperCase()}; it was not applied.`,
        }),
      );
    else found = found.filter((product) => withinPrice(product.variants ?? [], price));
  }
  const products = found.flatMap(
    (product) => toUcpProduct(product, product.variants ?? [], region.currency_code) ?? [],
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

/**
 * Lookup by identifier: a product id or handle resolves to its product with its featured variant (the first one that
 * can be bought), a variant id or SKU to that variant (`exact`). Products are answered once, in catalogue order, with
 * every identifier that resolved to each variant; an identifier that resolves to nothing is a warning at its index.
 */
export async function lookupUcpCatalog(db: Db, ids: string[], context?: CatalogContext): Promise<LookupResult> {
  const { region, notes } = await regionFor(db, context);
  const [byProduct, byVariant] = await Promise.all([
    search.findProductsByIdOrHandle(db, ids),
    search.findVariantsByIdOrSku(db, ids),
  ]);
  const productIds = [...new Set([...byProduct.map((row) => row.id), ...byVariant.map((row) => row.product_id)])];
  const products = await productsIn(db, region, productIds);
  /** Variant id → the request identifiers that resolved to it, and how. */
  const inputs = new Map<string, Array<{ id: string; match: 'exact' | 'featured' }>>();
  const add = (variantId: string, input: { id: string; match: 'exact' | 'featured' }) => {
    const list = inputs.get(variantId) ?? [];
    if (!list.some((known) => known.id === input.id)) list.push(input);
    inputs.set(variantId, list);
  };
  ids.forEach((id, index) => {
    const variants = byVariant.filter((row) => row.id === id || row.sku === id);
    const product = products.find((candidate) =>
      byProduct.some((row) => row.id === candidate.id && (row.id === id || row.handle === id)),
    );
    const priced = (productId: string) =>
      pricedVariants(products.find((candidate) => candidate.id === productId)?.variants ?? []);
    let resolved = false;
    for (const variant of variants)
      if (priced(variant.product_id).some((row) => row.id === variant.id)) {
        add(variant.id, { id, match: 'exact' });
        resolved = true;
      }
    if (product) {
      const buyable = priced(product.id);
      const featured = buyable.find(
        (row) => !row.manage_inventory || row.allow_backorder || row.inventory_quantity > 0,
      );
      const chosen = featured ?? buyable[0];
      if (chosen) {
        add(chosen.id, { id, match: 'featured' });
        resolved = true;
      }
    }
    if (!resolved)
      notes.push(
        ucpMessage({
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

/** One product by product id or handle, or variant id or SKU (that variant then selected); undefined when none. */
export async function findUcpProduct(
  db: Db,
  id: string,
  context?: CatalogContext,
): Promise<{ product: UcpProduct; variantId: string | undefined; notes: UcpMessage[] } | undefined> {
  const { region, notes } = await regionFor(db, context);
  const [byProduct, byVariant] = await Promise.all([
    search.findProductsByIdOrHandle(db, [id]),
    search.findVariantsByIdOrSku(db, [id]),
  ]);
  const variant = byVariant.find((row) => row.id === id) ?? byVariant[0];
  const productId = byProduct[0]?.id ?? variant?.product_id;
  if (!productId) return undefined;
  const [found] = await productsIn(db, region, [productId]);
  const product = found && toUcpProduct(found, found.variants ?? [], region.currency_code);
  if (!product) return undefined;
  return { product, variantId: byProduct.length ? undefined : variant?.id, notes };
}
