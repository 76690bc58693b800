// The merchant's order operations under /admin (scope admin:orders, enforced from the contract by
// src/http/agent-auth.ts); every change under its Idempotency-Key (src/services/admin-orders.ts).
import type { Deps } from '../../deps.js';
import type { AppContext } from '../../http/context.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as admin from '../../services/admin-orders.js';
import { clientOf } from '../agent/carts.js';

type AdminOrderOperation =
  | 'listAdminOrders'
  | 'getAdminOrder'
  | 'createOrderShipment'
  | 'markOrderDelivered'
  | 'cancelAdminOrder'
  | 'refundAdminOrder'
  | 'listAuditEvents';

function call<Body>(ctx: AppContext, body: Body): admin.AdminCall<Body> {
  return { clientId: clientOf(ctx), idempotencyKey: ctx.get('Idempotency-Key'), body };
}

/** The order after a change; a replay says so. */
function changed(ctx: AppContext, { order, replayed }: admin.AdminChange) {
  if (replayed) ctx.set('Idempotent-Replayed', 'true');
  return { status: 200 as const, body: order };
}

export function adminOrderHandlers(deps: Deps): Pick<OperationHandlers, AdminOrderOperation> {
  return {
    async listAdminOrders({ query }) {
      return { status: 200, body: await admin.listAdminOrders(deps, query) };
    },
    async getAdminOrder({ path }) {
      return { status: 200, body: await admin.getAdminOrder(deps, path.id) };
    },
    async createOrderShipment({ path, body }, ctx) {
      return changed(ctx, await admin.shipOrder(deps, path.id, call(ctx, body)));
    },
    async markOrderDelivered({ path, body }, ctx) {
      return changed(ctx, await admin.deliverOrder(deps, path.id, call(ctx, body)));
    },
    async cancelAdminOrder({ path, body }, ctx) {
      return changed(ctx, await admin.cancelOrder(deps, path.id, call(ctx, body)));
    },
    async refundAdminOrder({ path, body }, ctx) {
      return changed(ctx, await admin.refundOrder(deps, path.id, call(ctx, body)));
    },
    async listAuditEvents({ query }) {
      return { status: 200, body: await admin.listAuditEvents(deps, query) };
    },
  };
}
