// Agent order reads (scope orders:read, enforced from the contract by src/http/agent-auth.ts): orders made from the
// client's own carts only.
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import { getAgentOrder } from '../../services/orders.js';
import { clientOf } from './carts.js';

export function agentOrderHandlers(deps: Deps): Pick<OperationHandlers, 'getAgentOrder'> {
  return {
    async getAgentOrder({ path }, ctx) {
      return { status: 200, body: await getAgentOrder(deps, clientOf(ctx), path.id) };
    },
  };
}
