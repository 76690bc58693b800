// Checkout session operations. Both spellings of each path (`/checkout-sessions`, `/checkout_sessions`) are
// documented as separate operations and served by the same handler.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import type { AppContext } from '../../http/context.js';
import type { OperationHandler, OperationHandlers } from '../../http/openapi.js';
import * as checkout from '../../services/checkout.js';
import { claimIdempotencyKey, idempotentResultStatement, releaseIdempotencyKey, whileClaimed, type IdempotentRequest } from '../../services/idempotency.js';

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

const IDEMPOTENCY_SCOPE = 'createCheckoutSession';

/** Creates under an Idempotency-Key: replays a stored answer, or records this one atomically with the new session. */
async function createIdempotently(deps: Deps, ctx: AppContext, input: checkout.CheckoutSessionInput, key: string): Promise<void> {
  const request: IdempotentRequest = { scope: IDEMPOTENCY_SCOPE, key, body: input };
  const claim = await claimIdempotencyKey(deps, request);
  if (claim.kind === 'replay') {
    ctx.status = claim.result.status;
    ctx.set('API-Version', claim.result.apiVersion);
    ctx.set('Idempotent-Replayed', 'true');
    ctx.body = claim.result.body;
    return;
  }
  const apiVersion = ctx.response.get('API-Version');
  try {
    ctx.body = await whileClaimed(deps, request, claim.claimedAt, () =>
      checkout.createCheckoutSession(deps, input, {
        alongside: (session) => idempotentResultStatement(deps, request, { status: 201, body: session, apiVersion }),
      }),
    );
    ctx.status = 201;
  } catch (error) {
    await releaseIdempotencyKey(deps, request, claim.claimedAt).catch((releaseError) => ctx.state.log.warn({ err: releaseError }, 'could not release idempotency key'));
    throw error;
  }
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
