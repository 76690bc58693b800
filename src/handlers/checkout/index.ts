// Checkout session operations. Both spellings of each path (`/checkout-sessions`, `/checkout_sessions`) are
// documented as separate operations and served by the same handler.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import type { AppContext } from '../../http/context.js';
import type { OperationHandler, OperationHandlers } from '../../http/openapi.js';
import * as checkout from '../../services/checkout.js';

type SessionPath = operations['getCheckoutSession']['parameters']['path'];
type CheckoutOperation =
  | 'createCheckoutSession'
  | 'createCheckoutSessionAlias'
  | 'getCheckoutSession'
  | 'getCheckoutSessionAlias'
  | 'completeCheckoutSession'
  | 'completeCheckoutSessionAlias'
  | 'cancelCheckoutSession'
  | 'cancelCheckoutSessionAlias';

/** Creates under an Idempotency-Key: a replay answers the stored status, body and API version. */
async function createIdempotently(
  deps: Deps,
  ctx: AppContext,
  input: checkout.CheckoutSessionInput,
  key: string,
): Promise<void> {
  const created = await checkout.createCheckoutSessionIdempotently(deps, input, key, ctx.response.get('API-Version'));
  if (created.replayed) {
    ctx.set('API-Version', created.apiVersion);
    ctx.set('Idempotent-Replayed', 'true');
  }
  ctx.status = created.status;
  ctx.body = created.session;
}

export function checkoutHandlers(deps: Deps): Pick<OperationHandlers, CheckoutOperation> {
  const create: OperationHandler = async (c, ctx) => {
    const input = c.request.requestBody as checkout.CheckoutSessionInput;
    const key = ctx.get('Idempotency-Key');
    if (key) return createIdempotently(deps, ctx, input, key);
    ctx.body = await checkout.createCheckoutSession(deps, input);
    ctx.status = 201;
  };
  const get: OperationHandler = async (c, ctx) => {
    ctx.body = await checkout.getCheckoutSession(deps, (c.request.params as SessionPath).id);
  };
  const complete: OperationHandler = async (c) => {
    await checkout.completeCheckoutSession(deps, (c.request.params as SessionPath).id);
  };
  const cancel: OperationHandler = async (c, ctx) => {
    ctx.body = await checkout.cancelCheckoutSession(deps, (c.request.params as SessionPath).id);
  };
  return {
    createCheckoutSession: create,
    createCheckoutSessionAlias: create,
    getCheckoutSession: get,
    getCheckoutSessionAlias: get,
    completeCheckoutSession: complete,
    completeCheckoutSessionAlias: complete,
    cancelCheckoutSession: cancel,
    cancelCheckoutSessionAlias: cancel,
  };
}
