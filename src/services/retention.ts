// Retention: what the service keeps and for how long (docs/operations.md "Retention"; periods: deps.config.retention).
// Anonymous writes (registrations, tokens, carts, sessions, idempotency records) would otherwise grow the database
// without end. A sweep every 5 minutes purges each kind in batches of 500 (one statement each, so a sweep never holds
// locks for long, and one connection at a time), batch after batch while they come back full, up to what the
// documented write limit lets clients store between two sweeps (sweepBound); several instances may sweep at once
// (rows are taken with SKIP LOCKED), and an instance starts no sweep while its last one runs.
import * as repo from '../db/repositories/retention.js';
import type { Deps } from '../deps.js';

/** Live tokens a client may hold; issuing one more revokes the oldest. */
const LIVE_TOKENS_PER_CLIENT = 10;

const BATCH = 500;
/**
 * How many addresses writing at the full RATE_LIMIT_PER_MINUTE a sweep keeps pace with. The bound was once 20 batches
 * (2,000 rows a minute per kind at the 5-minute sweep), which four addresses creating UCP sessions outran (issue #29).
 */
const PACE_ADDRESSES = 100;
/** A sweep may delete twice what those addresses write between two sweeps, so a backlog is worked off too. */
const CATCH_UP = 2;

/**
 * Rows of one kind a sweep deletes at most: what PACE_ADDRESSES addresses at the documented write limit can store
 * between two sweeps, CATCH_UP times over (600/min × 5 min × 100 × 2 = 600,000 by default: 1,200 batches). A bound
 * all the same, so a sweep ends however fast rows arrive.
 */
export function sweepBound(config: Pick<Deps['config'], 'rateLimitPerMinute' | 'retention'>): number {
  const minutes = config.retention.sweepEveryMs / 60_000;
  return Math.max(BATCH, Math.ceil(config.rateLimitPerMinute * minutes * PACE_ADDRESSES * CATCH_UP));
}

/** Deletes in batches until a batch comes back short (nothing more to do) or the per-sweep bound is reached. */
async function inBatches(bound: number, purge: (batch: number) => Promise<number>): Promise<number> {
  let total = 0;
  while (total < bound) {
    const n = await purge(Math.min(BATCH, bound - total));
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
  const bound = sweepBound(deps.config);
  return {
    idempotencyRecords: await inBatches(bound, (batch) =>
      repo.deleteExpiredIdempotencyRecords(deps.db, 'idempotency_keys', new Date(now), batch),
    ),
    protocolIdempotencyRecords: await inBatches(bound, (batch) =>
      repo.deleteExpiredIdempotencyRecords(deps.db, 'protocol_idempotency', new Date(now), batch),
    ),
    tokens: await inBatches(bound, (batch) =>
      repo.deleteTokensExpiredBefore(deps.db, ago(periods.expiredTokensMs), batch),
    ),
    clients: await inBatches(bound, (batch) => repo.deleteIdleClients(deps.db, ago(periods.idleClientsMs), batch)),
    openCarts: await inBatches(bound, (batch) =>
      repo.deleteCarts(deps.db, 'open', 'updated_at', ago(periods.openCartsMs), new Date(now), batch),
    ),
    unpaidSessions: await inBatches(bound, (batch) =>
      repo.deleteCarts(deps.db, 'ready_for_payment', 'updated_at', ago(periods.unpaidSessionsMs), new Date(now), batch),
    ),
    canceledSessions: await inBatches(bound, (batch) =>
      repo.deleteCarts(deps.db, 'canceled', 'canceled_at', ago(periods.canceledSessionsMs), new Date(now), batch),
    ),
  };
}

/** Sweeps every RETENTION_SWEEP_SECONDS (not keeping the process alive); returns the function that stops it. */
export function startRetentionSweeps(deps: Deps): () => void {
  // A sweep working off a backlog may outlast the interval: the next one starts after it, not beside it.
  let sweeping = false;
  const timer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepRetention(deps)
      .then(
        (deleted) => {
          if (deps.metrics)
            for (const [kind, rows] of Object.entries(deleted)) deps.metrics.retentionPurged.labels(kind).inc(rows);
          deps.log.info({ deleted }, 'retention sweep');
        },
        (error: unknown) => deps.log.warn({ err: error }, 'retention sweep failed; the next one retries'),
      )
      .finally(() => (sweeping = false));
  }, deps.config.retention.sweepEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** After issuing a token: the client keeps at most its newest LIVE_TOKENS_PER_CLIENT live tokens. */
export function capLiveTokens(deps: Deps, clientId: string, now: Date): Promise<void> {
  return repo.revokeTokensBeyond(deps.db, clientId, LIVE_TOKENS_PER_CLIENT, now);
}
