// The merchant's catalogue changes under /admin (scope admin:catalog, enforced from the contract).
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as catalog from '../../services/admin-catalog.js';
import { clientOf } from '../agent/carts.js';

export function adminCatalogHandlers(
  deps: Deps,
): Pick<OperationHandlers, 'adjustVariantStock' | 'updateVariantPrices' | 'publishProduct' | 'unpublishProduct'> {
  const publication =
    (published: boolean): OperationHandlers['publishProduct'] =>
    async ({ path, body }, ctx) => {
      const { answer, replayed } = await catalog.setProductPublished(deps, path.id, published, {
        clientId: clientOf(ctx),
        idempotencyKey: ctx.get('Idempotency-Key'),
        body,
      });
      if (replayed) ctx.set('Idempotent-Replayed', 'true');
      return { status: 200, body: answer };
    };
  return {
    publishProduct: publication(true),
    unpublishProduct: publication(false),
    async adjustVariantStock({ path, body }, ctx) {
      const { answer, replayed } = await catalog.adjustStock(deps, path.id, {
        clientId: clientOf(ctx),
        idempotencyKey: ctx.get('Idempotency-Key'),
        body,
      });
      if (replayed) ctx.set('Idempotent-Replayed', 'true');
      return { status: 200, body: answer };
    },
    async updateVariantPrices({ path, body }, ctx) {
      const { answer, replayed } = await catalog.updatePrices(deps, path.id, {
        clientId: clientOf(ctx),
        idempotencyKey: ctx.get('Idempotency-Key'),
        body,
      });
      if (replayed) ctx.set('Idempotent-Replayed', 'true');
      return { status: 200, body: answer };
    },
  };
}
