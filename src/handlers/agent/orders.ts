// Agent order reads (scope orders:read, enforced from the contract by src/http/agent-auth.ts): orders made from the
// client's own carts only.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import { getAgentOrder } from '../../services/orders.js';
import { clientOf } from './carts.js';

export function agentOrderHandlers(deps: Deps): Pick<OperationHandlers, 'getAgentOrder'> {
  return {
    async getAgentOrder(c, ctx) {
      const { id } = c.request.params as operations['getAgentOrder']['parameters']['path'];
      ctx.body = await getAgentOrder(deps, clientOf(ctx), id);
    },
  };
}
