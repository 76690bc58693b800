// Checkout session operations. Both spellings of each path (`/checkout-sessions`, `/checkout_sessions`) are
// documented as separate operations and served by the same handler.
import type { Deps } from '../../deps.js';
import type { OperationHandler, OperationHandlers } from '../../http/openapi.js';
import { keyRefusalError } from '../../domain/idempotency.js';
import * as checkout from '../../services/checkout.js';
import * as creates from '../../services/checkout/create.js';

type CheckoutOperation =
  | 'createCheckoutSession'
  | 'createCheckoutSessionAlias'
  | 'getCheckoutSession'
  | 'getCheckoutSessionAlias'
  | 'completeCheckoutSession'
  | 'completeCheckoutSessionAlias'
  | 'cancelCheckoutSession'
  | 'cancelCheckoutSessionAlias'
  | 'updateCheckoutSession'
  | 'updateCheckoutSessionAlias';

export function checkoutHandlers(deps: Deps): Pick<OperationHandlers, CheckoutOperation> {
  /** Under an Idempotency-Key, a replay answers the stored status, body and API version. */
  const create: OperationHandler<'createCheckoutSession'> = async ({ body }, ctx) => {
    const key = ctx.get('Idempotency-Key');
    if (!key) return { status: 201, body: await creates.createCheckoutSession(deps, body) };
    const created = await creates.createCheckoutSessionIdempotently(deps, body, key, ctx.response.get('API-Version'));
    if (created.kind !== 'created') throw keyRefusalError(created);
    if (created.replayed) {
      ctx.set('API-Version', created.apiVersion);
      ctx.set('Idempotent-Replayed', 'true');
    }
    return { status: 201, body: created.session };
  };
  const get: OperationHandler<'getCheckoutSession'> = async ({ path }) => ({
    status: 200,
    body: await checkout.getCheckoutSession(deps, path.id),
  });
  const complete: OperationHandler<'completeCheckoutSession'> = async ({ path }) => {
    await checkout.completeCheckoutSession(deps, path.id);
  };
  const cancel: OperationHandler<'cancelCheckoutSession'> = async ({ path }) => ({
    status: 200,
    body: await checkout.cancelCheckoutSession(deps, path.id),
  });
  const update: OperationHandler<'updateCheckoutSession'> = async ({ path, body }) => ({
    status: 200,
    body: await checkout.updateCheckoutSession(deps, path.id, body),
  });
  return {
    updateCheckoutSession: update,
    updateCheckoutSessionAlias: update,
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
