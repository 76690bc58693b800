// Public catalogue operations: parse (already validated), call the catalogue service, send a cacheable response
// through the in-process read cache.
import type { Deps } from '../../deps.js';
import { sendCachedRead } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as catalog from '../../services/catalog.js';

type CatalogHandlers = Pick<
  OperationHandlers,
  'listProducts' | 'getProduct' | 'listReviews' | 'listRegions' | 'listCollections'
>;

export function catalogHandlers({ db, readCache }: Deps): CatalogHandlers {
  return {
    async listProducts({ query }, ctx) {
      await sendCachedRead(ctx, readCache, () =>
        catalog.listProducts(db, {
          handle: query.handle,
          limit: query.limit ?? 12,
          offset: query.offset ?? 0,
          regionId: query.region_id,
          fields: query.fields,
        }),
      );
    },
    async getProduct({ path, query }, ctx) {
      await sendCachedRead(ctx, readCache, async () => ({
        product: await catalog.getProduct(db, path.id, { regionId: query.region_id, fields: query.fields }),
      }));
    },
    async listReviews({ query }, ctx) {
      await sendCachedRead(ctx, readCache, () => catalog.listReviews(db, query.product_id));
    },
    async listRegions(_input, ctx) {
      await sendCachedRead(ctx, readCache, () => catalog.listRegions(db));
    },
    async listCollections({ query }, ctx) {
      await sendCachedRead(ctx, readCache, () => catalog.listCollections(db, query.handle));
    },
  };
}
