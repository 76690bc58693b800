// The agent cart API (scope cart:write, enforced from the contract by src/http/agent-auth.ts). Every cart belongs to
// the OAuth client the bearer token was issued to; answers are per client and never cached.
import type { Deps } from '../../deps.js';
import type { AppContext } from '../../http/context.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as agentCarts from '../../services/agent-carts.js';

type AgentCartOperation =
  | 'createAgentCart'
  | 'getAgentCart'
  | 'addAgentCartLineItem'
  | 'updateAgentCartLineItem'
  | 'removeAgentCartLineItem'
  | 'createAgentCartCheckoutSession';

/** The authenticated client. Every cart operation requires a token, so a missing one is a wiring bug, never "no owner". */
export function clientOf(ctx: AppContext): string {
  const { grant } = ctx.state;
  if (grant === undefined) throw new Error('A cart operation ran without an authenticated client.');
  return grant.clientId;
}

export function agentCartHandlers(deps: Deps): Pick<OperationHandlers, AgentCartOperation> {
  return {
    async createAgentCart({ body }, ctx) {
      return { status: 201, body: await agentCarts.createCart(deps, clientOf(ctx), body) };
    },
    async getAgentCart({ path }, ctx) {
      return { status: 200, body: await agentCarts.getCart(deps, clientOf(ctx), path.id) };
    },
    async addAgentCartLineItem({ path, body }, ctx) {
      return { status: 200, body: await agentCarts.addLineItem(deps, clientOf(ctx), path.id, body) };
    },
    async updateAgentCartLineItem({ path, body }, ctx) {
      const cart = await agentCarts.updateLineItem(deps, clientOf(ctx), path.id, path.line_id, body.quantity);
      return { status: 200, body: cart };
    },
    async removeAgentCartLineItem({ path }, ctx) {
      return { status: 200, body: await agentCarts.removeLineItem(deps, clientOf(ctx), path.id, path.line_id) };
    },
    async createAgentCartCheckoutSession({ path }, ctx) {
      const { session, created } = await agentCarts.checkOut(deps, clientOf(ctx), path.id);
      return created ? { status: 201, body: session } : { status: 200, body: session };
    },
  };
}
