// The merchant's promotions under /admin (scope admin:promotions, enforced from the contract).
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as promotions from '../../services/admin-promotions.js';
import { clientOf } from '../agent/carts.js';

export function adminPromotionHandlers(
  deps: Deps,
): Pick<OperationHandlers, 'listPromotions' | 'createPromotion' | 'expirePromotion'> {
  return {
    async createPromotion({ body }, ctx) {
      const { answer, replayed } = await promotions.createPromotion(deps, {
        clientId: clientOf(ctx),
        idempotencyKey: ctx.get('Idempotency-Key'),
        body,
      });
      if (replayed) ctx.set('Idempotent-Replayed', 'true');
      return { status: 201, body: answer };
    },
    async listPromotions() {
      return { status: 200, body: await promotions.listPromotions(deps) };
    },
    async expirePromotion({ path }, ctx) {
      const { answer, replayed } = await promotions.expirePromotion(deps, path.code, {
        clientId: clientOf(ctx),
        idempotencyKey: ctx.get('Idempotency-Key'),
        body: undefined,
      });
      if (replayed) ctx.set('Idempotent-Replayed', 'true');
      return { status: 200, body: answer };
    },
  };
}
