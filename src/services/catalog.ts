// The catalogue as the REST handlers, the agent API and the MCP tools all see it: one path from query to API shape.
import type { components } from '../../codegen/types.js';
import * as repo from '../db/repositories/catalog.js';
import type { Db } from '../db/knex.js';
import { shapeProduct, type Product } from '../domain/catalog.js';
import { parseFieldSelection } from '../domain/fields.js';
import { BadRequest, NotFound } from '../domain/errors.js';

type Schemas = components['schemas'];

export interface ProductQuery {
  handle?: string;
  ids?: string[];
  limit: number;
  offset: number;
  regionId?: string;
  fields?: string;
}

/** The region a request prices in: the one named, or the store default; an unknown id is the caller's mistake. */
export async function resolveRegion(
  db: Db,
  regionId: string | undefined,
  param = 'region_id',
): Promise<repo.RegionRow> {
  return requireRegion(await repo.findRegion(db, regionId), regionId, param);
}

/** The region found for `regionId`; none found is the caller's mistake. */
export function requireRegion(
  region: repo.RegionRow | undefined,
  regionId: string | undefined,
  param = 'region_id',
): repo.RegionRow {
  if (!region) {
    throw new BadRequest('invalid_parameter', `Unknown region "${regionId}".`, {
      param,
      next: { to: 'list_regions' },
    });
  }
  return region;
}

export async function listProducts(db: Db, query: ProductQuery): Promise<Schemas['ProductList']> {
  const selection = parseFieldSelection(query.fields);
  const page = await repo.readProductPage(db, {
    regionId: query.regionId,
    filter: { handle: query.handle, ids: query.ids },
    limit: query.limit,
    offset: query.offset,
    variants: selection.variants !== null,
  });
  const region = requireRegion(page.region, query.regionId);
  return {
    products: page.products.map((product) => shapeProduct(product, product.variants ?? [], selection, region)),
    count: page.count,
    offset: query.offset,
    limit: query.limit,
  };
}

export async function getProduct(db: Db, id: string, query: { regionId?: string; fields?: string }): Promise<Product> {
  const { products } = await listProducts(db, { ...query, ids: [id], limit: 1, offset: 0 });
  const [product] = products;
  if (!product) {
    throw new NotFound(`No product with id ${id}.`, { next: { to: 'find_product' } });
  }
  return product;
}

export async function listReviews(db: Db, productId: string | undefined): Promise<Schemas['ReviewList']> {
  const { rows, count, average } = await repo.listReviewRows(db, productId);
  return { reviews: rows, count, avg_rating: average };
}

export async function listRegions(db: Db): Promise<Schemas['RegionList']> {
  const { regions, countries } = await repo.listRegionsWithCountries(db);
  return {
    regions: regions.map((region) => ({
      id: region.id,
      name: region.name,
      currency_code: region.currency_code,
      countries: countries
        .filter((country) => country.region_id === region.id)
        .map(({ iso_2, display_name }) => ({ iso_2, display_name })),
    })),
  };
}

export async function listCollections(db: Db, handle: string | undefined): Promise<Schemas['CollectionList']> {
  return {
    collections: await repo.listCollectionRows(db, handle),
  };
}
