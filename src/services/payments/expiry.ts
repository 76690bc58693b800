// Expiring a session's processor checkouts, so that they can no longer be paid: when the session is cancelled, and
// when a changed quote replaces one. Apart from the rest of the Stripe adapter so that the checkout service, which
// cancels sessions, can use it without importing the order path.
import type { Knex } from 'knex';
import type Stripe from 'stripe';
import type { Db } from '../../db/knex.js';
import * as processorCheckouts from '../../db/repositories/processor-checkouts.js';
import type { Deps } from '../../deps.js';

/** A cancel waits at most this long for the processor; past it, a payment that still arrives is refused and refunded. */
const EXPIRE_TIMEOUT_MS = 5_000;

/** Expires one Stripe Checkout; a failure (already paid, expired, unreachable) is logged, not thrown. */
export async function expireStripeCheckout(deps: Deps, stripe: Stripe, reference: string): Promise<boolean> {
  try {
    await stripe.checkout.sessions.expire(
      reference,
      {},
      { idempotencyKey: `expire:${reference}`, timeout: EXPIRE_TIMEOUT_MS, maxNetworkRetries: 0 },
    );
  } catch (error) {
    // Already paid, expired or gone: the order path refuses and refunds a payment the store cannot honour.
    deps.log.warn(
      { err: error instanceof Error ? error.message : error, reference },
      'could not expire a Stripe checkout',
    );
    return false;
  }
  await processorCheckouts.markProcessorCheckoutExpired(deps.db, 'stripe', reference, new Date(deps.now()));
  return true;
}

/** Expires every checkout of the session that could still be paid (after it was cancelled). */
export async function expireProcessorCheckouts(deps: Deps, sessionId: string): Promise<void> {
  const { stripe } = deps;
  if (!stripe) return;
  const open = await processorCheckouts.openProcessorCheckouts(deps.db, 'stripe', sessionId, new Date(deps.now()));
  await Promise.all(open.map((checkout) => expireStripeCheckout(deps, stripe, checkout.reference)));
}

/**
 * Expires the session's checkouts once `db`'s transaction, which cancels it, has committed (at once outside one):
 * the processor is not called while the transaction holds its locks, nor for a cancel rolled back.
 */
export function expireProcessorCheckoutsAfterCommit(deps: Deps, db: Db, sessionId: string): void {
  if (!deps.stripe) return;
  const transaction = db as unknown as Partial<Knex.Transaction>;
  const committed = transaction.isTransaction ? transaction.executionPromise! : Promise.resolve();
  committed.then(
    () =>
      expireProcessorCheckouts(deps, sessionId).catch((error: unknown) =>
        deps.log.warn({ err: error, session: sessionId }, 'could not expire the checkouts of a cancelled session'),
      ),
    () => undefined, // rolled back: nothing was cancelled
  );
}
