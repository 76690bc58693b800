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

function unknownFilter(param: 'collection' | 'category', value: string): BadRequest {
  return new BadRequest('invalid_parameter', `Unknown ${param} "${value}".`, {
    param,
    next: { to: param === 'collection' ? 'list_agent_collections' : 'list_agent_categories' },
  });
}

/** The ids the filters allow, or undefined when no filter narrows the catalogue. */
async function filteredProductIds(db: Db, query: AgentProductQuery): Promise<string[] | undefined> {
  if (query.q === undefined && query.collection === undefined && query.category === undefined) return undefined;
  const search: repo.ProductSearch = { q: query.q };
  if (query.collection !== undefined) {
    search.collectionId = await repo.findCollectionId(db, query.collection);
    if (search.collectionId === undefined) throw unknownFilter('collection', query.collection);
  }
  if (query.category !== undefined) {
    search.categoryIds = await repo.findCategoryTreeIds(db, query.category);
    if (!search.categoryIds.length) throw unknownFilter('category', query.category);
  }
  return repo.searchProductIds(db, search);
}

async function requireProductId(db: Db, idOrHandle: string): Promise<string> {
  const id = await repo.findProductId(db, idOrHandle);
  if (id === undefined)
    throw new NotFound(`No product with id or handle "${idOrHandle}".`, { next: { to: 'list_agent_products' } });
  return id;
}

/** A missing field here means the selection above and the contract's AgentProduct disagree: a bug, never bad input. */
function lacking(what: string): Error {
  return new Error(`${what} lacks a field the agent API promises.`);
}

function agentVariant(variant: Schemas['Variant']): Schemas['AgentVariant'] {
  const { title, sku, manage_inventory, allow_backorder, inventory_quantity } = variant;
  if (
    title === undefined ||
    sku === undefined ||
    manage_inventory === undefined ||
    allow_backorder === undefined ||
    inventory_quantity === undefined
  )
    throw lacking(`Variant ${variant.id}`);
  return { ...variant, title, sku, manage_inventory, allow_backorder, inventory_quantity };
}

/** The catalogue's product with PRICES_AND_STOCK selected, checked to carry every field of an AgentProduct. */
function agentProduct(product: Schemas['Product']): Schemas['AgentProduct'] {
  const { title, handle, description, material, thumbnail, variants } = product;
  if (
    title === undefined ||
    handle === undefined ||
    description === undefined ||
    material === undefined ||
    thumbnail === undefined ||
    variants === undefined
  )
    throw lacking(`Product ${product.id}`);
  return { ...product, title, handle, description, material, thumbnail, variants: variants.map(agentVariant) };
}

export async function listProducts(db: Db, query: AgentProductQuery): Promise<Schemas['AgentProductList']> {
  const ids = await filteredProductIds(db, query);
  const list = await catalog.listProducts(db, {
    ids,
    limit: query.limit,
    offset: query.offset,
    regionId: query.regionId,
    fields: PRICES_AND_STOCK,
  });
  return { ...list, products: list.products.map(agentProduct) };
}

export async function getProduct(
  db: Db,
  idOrHandle: string,
  regionId: string | undefined,
): Promise<Schemas['AgentProduct']> {
  const id = await requireProductId(db, idOrHandle);
  return agentProduct(await catalog.getProduct(db, id, { regionId, fields: PRICES_AND_STOCK }));
}

export async function listReviews(db: Db, product: string | undefined): Promise<Schemas['ReviewList']> {
  return catalog.listReviews(db, product === undefined ? undefined : await requireProductId(db, product));
}

export async function listCategories(db: Db): Promise<Schemas['AgentCategoryList']> {
  return { categories: await repo.listCategoryRows(db) };
}
