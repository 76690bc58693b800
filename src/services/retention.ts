// Retention: what the service keeps and for how long (README "Retention"; the periods are deps.config.retention).
// Anonymous writes (registrations, tokens, carts, sessions, idempotency records) would otherwise grow the database
// without end. A sweep every 5 minutes purges each kind in batches of 500, at most MAX_BATCHES per kind per sweep, so
// one sweep never holds locks or the pool for long; several instances may sweep at once (rows are taken with SKIP
// LOCKED).
import * as repo from '../db/repositories/retention.js';
import type { Deps } from '../deps.js';

/** Live tokens a client may hold; issuing one more revokes the oldest. */
const LIVE_TOKENS_PER_CLIENT = 10;

const BATCH = 500;
const MAX_BATCHES = 20;

/** Deletes in batches until a batch comes back short (nothing more to do) or the per-sweep bound is reached. */
async function inBatches(purge: (batch: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await purge(BATCH);
    total += n;
    if (n < BATCH) break;
  }
  return total;
}

/** One sweep over every kind; returns how many rows of each were deleted. */
export async function sweepRetention(deps: Deps): Promise<Record<string, number>> {
  const now = deps.now();
  const periods = deps.config.retention;
  const ago = (ms: number) => new Date(now - ms);
  return {
    idempotencyRecords: await inBatches((batch) =>
      repo.deleteExpiredIdempotencyRecords(deps.db, 'idempotency_keys', new Date(now), batch),
    ),
    protocolIdempotencyRecords: await inBatches((batch) =>
      repo.deleteExpiredIdempotencyRecords(deps.db, 'protocol_idempotency', new Date(now), batch),
    ),
    tokens: await inBatches((batch) => repo.deleteTokensExpiredBefore(deps.db, ago(periods.expiredTokensMs), batch)),
    clients: await inBatches((batch) => repo.deleteIdleClients(deps.db, ago(periods.idleClientsMs), batch)),
    openCarts: await inBatches((batch) =>
      repo.deleteCarts(deps.db, 'open', 'updated_at', ago(periods.openCartsMs), new Date(now), batch),
    ),
    unpaidSessions: await inBatches((batch) =>
      repo.deleteCarts(deps.db, 'ready_for_payment', 'updated_at', ago(periods.unpaidSessionsMs), new Date(now), batch),
    ),
    canceledSessions: await inBatches((batch) =>
      repo.deleteCarts(deps.db, 'canceled', 'canceled_at', ago(periods.canceledSessionsMs), new Date(now), batch),
    ),
  };
}

/** Sweeps every RETENTION_SWEEP_SECONDS (not keeping the process alive); returns the function that stops it. */
export function startRetentionSweeps(deps: Deps): () => void {
  const timer = setInterval(() => {
    sweepRetention(deps).then(
      (deleted) => deps.log.info({ deleted }, 'retention sweep'),
      (error: unknown) => deps.log.warn({ err: error }, 'retention sweep failed; the next one retries'),
    );
  }, deps.config.retention.sweepEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** After issuing a token: the client keeps at most its newest LIVE_TOKENS_PER_CLIENT live tokens. */
export function capLiveTokens(deps: Deps, clientId: string, now: Date): Promise<void> {
  return repo.revokeTokensBeyond(deps.db, clientId, LIVE_TOKENS_PER_CLIENT, now);
}
