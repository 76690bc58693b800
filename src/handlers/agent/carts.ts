// The agent cart API (scope cart:write, enforced from the contract by src/http/agent-auth.ts). Every cart belongs to
// the OAuth client the bearer token was issued to; answers are per client and never cached.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import type { AppContext } from '../../http/context.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as agentCarts from '../../services/agent-carts.js';
import type { CheckoutSessionInput } from '../../services/checkout.js';

type Path<Op extends keyof operations> = operations[Op]['parameters']['path'];
type Body<Op extends keyof operations> = operations[Op]['requestBody'] extends { content: infer C }
  ? C[keyof C]
  : never;

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
    async createAgentCart(c, ctx) {
      ctx.body = await agentCarts.createCart(deps, clientOf(ctx), c.request.requestBody as CheckoutSessionInput);
      ctx.status = 201;
    },
    async getAgentCart(c, ctx) {
      const { id } = c.request.params as Path<'getAgentCart'>;
      ctx.body = await agentCarts.getCart(deps, clientOf(ctx), id);
    },
    async addAgentCartLineItem(c, ctx) {
      const { id } = c.request.params as Path<'addAgentCartLineItem'>;
      ctx.body = await agentCarts.addLineItem(
        deps,
        clientOf(ctx),
        id,
        c.request.requestBody as Body<'addAgentCartLineItem'>,
      );
    },
    async updateAgentCartLineItem(c, ctx) {
      const { id, line_id } = c.request.params as Path<'updateAgentCartLineItem'>;
      const { quantity } = c.request.requestBody as Body<'updateAgentCartLineItem'>;
      ctx.body = await agentCarts.updateLineItem(deps, clientOf(ctx), id, line_id, quantity);
    },
    async removeAgentCartLineItem(c, ctx) {
      const { id, line_id } = c.request.params as Path<'removeAgentCartLineItem'>;
      ctx.body = await agentCarts.removeLineItem(deps, clientOf(ctx), id, line_id);
    },
    async createAgentCartCheckoutSession(c, ctx) {
      const { id } = c.request.params as Path<'createAgentCartCheckoutSession'>;
      const { session, created } = await agentCarts.checkOut(deps, clientOf(ctx), id);
      ctx.body = session;
      ctx.status = created ? 201 : 200;
    },
  };
}
