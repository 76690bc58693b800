// Public catalogue operations: parse (already validated), call the catalogue service, answer its result. The contract
// marks them `x-cacheable`, so src/http/caching.ts serves repeats from the read cache and adds the ETag.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as catalog from '../../services/catalog.js';

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
type Path<Op extends keyof operations> = operations[Op]['parameters']['path'];

type CatalogHandlers = Pick<
  OperationHandlers,
  'listProducts' | 'getProduct' | 'listReviews' | 'listRegions' | 'listCollections'
>;

export function catalogHandlers({ db }: Deps): CatalogHandlers {
  return {
    async listProducts(c, ctx) {
      const query = c.request.query as Query<'listProducts'>;
      ctx.body = await catalog.listProducts(db, {
        handle: query.handle,
        limit: query.limit ?? 12,
        offset: query.offset ?? 0,
        regionId: query.region_id,
        fields: query.fields,
      });
    },
    async getProduct(c, ctx) {
      const { id } = c.request.params as Path<'getProduct'>;
      const query = c.request.query as Query<'getProduct'>;
      ctx.body = { product: await catalog.getProduct(db, id, { regionId: query.region_id, fields: query.fields }) };
    },
    async listReviews(c, ctx) {
      const query = c.request.query as Query<'listReviews'>;
      ctx.body = await catalog.listReviews(db, query.product_id);
    },
    async listRegions(_c, ctx) {
      ctx.body = await catalog.listRegions(db);
    },
    async listCollections(c, ctx) {
      const query = c.request.query as Query<'listCollections'>;
      ctx.body = await catalog.listCollections(db, query.handle);
    },
  };
}
