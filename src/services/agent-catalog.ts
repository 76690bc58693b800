// The catalogue as the agent API serves it: the shared catalogue service with prices and stock always selected, so an
// agent sees exactly what GET /api/store/products?fields=*variants.calculated_price,+variants.inventory_quantity shows,
// plus lookups by handle, text search, collection and category filters, and the category tree.
import type { components } from '../../codegen/types.js';
import * as repo from '../db/repositories/agent-catalog.js';
import type { Db } from '../db/knex.js';
import { BadRequest, NotFound } from '../domain/errors.js';
import * as catalog from './catalog.js';

type Schemas = components['schemas'];

const PRICES_AND_STOCK = '*variants.calculated_price,+variants.inventory_quantity';

export interface AgentProductQuery {
  q?: string;
  collection?: string;
  category?: string;
  limit: number;
  offset: number;
  regionId?: string;
}

function unknownFilter(param: string, value: string, listing: string): BadRequest {
  return new BadRequest('invalid_parameter', `Unknown ${param} "${value}".`, {
    param,
    resolution: `Use an id or handle from ${listing}.`,
  });
}

/** The ids the filters allow, or undefined when no filter narrows the catalogue. */
async function filteredProductIds(db: Db, query: AgentProductQuery): Promise<string[] | undefined> {
  if (query.q === undefined && query.collection === undefined && query.category === undefined) return undefined;
  const search: repo.ProductSearch = { q: query.q };
  if (query.collection !== undefined) {
    search.collectionId = await repo.findCollectionId(db, query.collection);
    if (search.collectionId === undefined)
      throw unknownFilter('collection', query.collection, 'GET /agent/collections');
  }
  if (query.category !== undefined) {
    search.categoryIds = await repo.findCategoryTreeIds(db, query.category);
    if (!search.categoryIds.length) throw unknownFilter('category', query.category, 'GET /agent/categories');
  }
  return repo.searchProductIds(db, search);
}

async function requireProductId(db: Db, idOrHandle: string): Promise<string> {
  const id = await repo.findProductId(db, idOrHandle);
  if (id === undefined)
    throw new NotFound(`No product with id or handle "${idOrHandle}".`, {
      resolution: 'List products with GET /agent/products.',
    });
  return id;
}

export async function listProducts(db: Db, query: AgentProductQuery): Promise<Schemas['ProductList']> {
  const ids = await filteredProductIds(db, query);
  return catalog.listProducts(db, {
    ids,
    limit: query.limit,
    offset: query.offset,
    regionId: query.regionId,
    fields: PRICES_AND_STOCK,
  });
}

export async function getProduct(
  db: Db,
  idOrHandle: string,
  regionId: string | undefined,
): Promise<Schemas['Product']> {
  const id = await requireProductId(db, idOrHandle);
  return catalog.getProduct(db, id, { regionId, fields: PRICES_AND_STOCK });
}

export async function listReviews(db: Db, product: string | undefined): Promise<Schemas['ReviewList']> {
  return catalog.listReviews(db, product === undefined ? undefined : await requireProductId(db, product));
}

export async function listCategories(db: Db): Promise<Schemas['AgentCategoryList']> {
  return { categories: await repo.listCategoryRows(db) };
}
