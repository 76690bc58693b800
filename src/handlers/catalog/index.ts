// Public catalogue operations: parse (already validated), call the catalogue service, send a cacheable response.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import { sendCacheable } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as catalog from '../../services/catalog.js';

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
type Path<Op extends keyof operations> = operations[Op]['parameters']['path'];

type CatalogHandlers = Pick<OperationHandlers, 'listProducts' | 'getProduct' | 'listReviews' | 'listRegions' | 'listCollections'>;

export function catalogHandlers({ db }: Deps): CatalogHandlers {
  return {
    async listProducts(c, ctx) {
      const query = c.request.query as Query<'listProducts'>;
      const page = await catalog.listProducts(db, {
        handle: query.handle,
        limit: query.limit ?? 12,
        offset: query.offset ?? 0,
        regionId: query.region_id,
        fields: query.fields,
      });
      sendCacheable(ctx, page);
    },
    async getProduct(c, ctx) {
      const { id } = c.request.params as Path<'getProduct'>;
      const query = c.request.query as Query<'getProduct'>;
      sendCacheable(ctx, { product: await catalog.getProduct(db, id, { regionId: query.region_id, fields: query.fields }) });
    },
    async listReviews(c, ctx) {
      const query = c.request.query as Query<'listReviews'>;
      sendCacheable(ctx, await catalog.listReviews(db, query.product_id));
    },
    async listRegions(_c, ctx) {
      sendCacheable(ctx, await catalog.listRegions(db));
    },
    async listCollections(c, ctx) {
      const query = c.request.query as Query<'listCollections'>;
      sendCacheable(ctx, await catalog.listCollections(db, query.handle));
    },
  };
}
