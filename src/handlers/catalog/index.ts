// Public catalogue operations: parse (already validated), call the catalogue service, answer its result. The contract
// marks them `x-cacheable`, so src/http/caching.ts serves repeats from the read cache and adds the ETag.
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as catalog from '../../services/catalog.js';

type CatalogHandlers = Pick<
  OperationHandlers,
  'listProducts' | 'getProduct' | 'listReviews' | 'listRegions' | 'listCollections'
>;

export function catalogHandlers({ db }: Deps): CatalogHandlers {
  return {
    async listProducts({ query }) {
      const products = await catalog.listProducts(db, {
        handle: query.handle,
        limit: query.limit ?? 12,
        offset: query.offset ?? 0,
        regionId: query.region_id,
        fields: query.fields,
      });
      return { status: 200, body: products };
    },
    async getProduct({ path, query }) {
      const product = await catalog.getProduct(db, path.id, { regionId: query.region_id, fields: query.fields });
      return { status: 200, body: { product } };
    },
    async listReviews({ query }) {
      return { status: 200, body: await catalog.listReviews(db, query.product_id) };
    },
    async listRegions() {
      return { status: 200, body: await catalog.listRegions(db) };
    },
    async listCollections({ query }) {
      return { status: 200, body: await catalog.listCollections(db, query.handle) };
    },
  };
}
