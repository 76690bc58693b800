// Catalogue queries only the agent API needs: lookups by id or handle, text search, and the category tree.
import type { components } from '../../../codegen/types.js';
import type { Db } from '../knex.js';

/** Categories are selected in exactly the contract's shape. */
export type CategoryRow = components['schemas']['AgentCategory'];

export interface ProductSearch {
  /** Words that must each appear in the title or the description (case-insensitive). */
  q?: string;
  collectionId?: string;
  /** The product must be in one of these categories. */
  categoryIds?: string[];
}

async function idByIdOrHandle(db: Db, table: string, idOrHandle: string): Promise<string | undefined> {
  const row: { id: string } | undefined = await db(table)
    .select('id')
    .where('id', idOrHandle)
    .orWhere('handle', idOrHandle)
    .first();
  return row?.id;
}

/** A published product's id (an unpublished product is not in the catalogue). */
export async function findProductId(db: Db, idOrHandle: string): Promise<string | undefined> {
  const row: { id: string } | undefined = await db('products')
    .select('id')
    .where('published', true)
    .andWhere((named) => named.where('id', idOrHandle).orWhere('handle', idOrHandle))
    .first();
  return row?.id;
}

export function findCollectionId(db: Db, idOrHandle: string): Promise<string | undefined> {
  return idByIdOrHandle(db, 'collections', idOrHandle);
}

/** The category named by id or handle and all its descendants; empty when there is no such category. */
export async function findCategoryTreeIds(db: Db, idOrHandle: string): Promise<string[]> {
  const rows: { id: string }[] = await db
    .withRecursive('tree', ['id'], (tree) =>
      tree
        .select('id')
        .from('categories')
        .where('id', idOrHandle)
        .orWhere('handle', idOrHandle)
        // UNION, not UNION ALL: a cycle in parent_id cannot make the recursion run forever.
        .union((children) => children.select('c.id').from('categories as c').join('tree', 'tree.id', 'c.parent_id')),
    )
    .select('id')
    .from('tree');
  return rows.map((row) => row.id);
}

/** `%term%` for ILIKE, with the pattern characters of the term itself escaped. */
function containing(term: string): string {
  return `%${term.replace(/[\\%_]/g, '\\$&')}%`;
}

export async function searchProductIds(db: Db, search: ProductSearch): Promise<string[]> {
  const query = db('products as p').select('p.id').where('p.published', true);
  for (const term of (search.q ?? '').split(/\s+/).filter(Boolean)) {
    query.where((matches) =>
      // Descriptions are HTML: match the text, not the markup.
      matches
        .whereILike('p.title', containing(term))
        .orWhereRaw(`regexp_replace(coalesce(p.description, ''), '<[^>]+>', ' ', 'g') ilike ?`, [containing(term)]),
    );
  }
  if (search.collectionId !== undefined) query.where('p.collection_id', search.collectionId);
  if (search.categoryIds !== undefined)
    query.whereIn('p.id', db('product_categories').select('product_id').whereIn('category_id', search.categoryIds));
  const rows: { id: string }[] = await query;
  return rows.map((row) => row.id);
}

/** Every category with its parent's handle, depth-first: each parent just before its children. */
export async function listCategoryRows(db: Db): Promise<CategoryRow[]> {
  return db
    .withRecursive('tree', ['id', 'path'], (tree) =>
      tree
        .select('id', 'handle')
        .from('categories')
        .whereNull('parent_id')
        .unionAll((children) =>
          children
            .select('c.id', db.raw(`tree.path || '/' || c.handle`))
            .from('categories as c')
            .join('tree', 'tree.id', 'c.parent_id'),
        ),
    )
    .from('tree')
    .join('categories as c', 'c.id', 'tree.id')
    .leftJoin('categories as p', 'p.id', 'c.parent_id')
    .orderBy('tree.path')
    .select('c.id', 'c.name', 'c.handle', 'c.description', 'c.parent_id', { parent_handle: 'p.handle' });
}

/** The variants named by id or SKU, each with its product: what a UCP catalog lookup resolves variant identifiers by. */
export async function findVariantsByIdOrSku(
  db: Db,
  identifiers: string[],
): Promise<Array<{ id: string; sku: string | null; product_id: string }>> {
  if (!identifiers.length) return [];
  return db('variants').select('id', 'sku', 'product_id').whereIn('id', identifiers).orWhereIn('sku', identifiers);
}

/** The products named by id or handle. */
export async function findProductsByIdOrHandle(
  db: Db,
  identifiers: string[],
): Promise<Array<{ id: string; handle: string }>> {
  if (!identifiers.length) return [];
  return db('products').select('id', 'handle').whereIn('id', identifiers).orWhereIn('handle', identifiers);
}
