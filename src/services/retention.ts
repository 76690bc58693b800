// Retention: what the service keeps and for how long (README "Retention"). Idempotency records go once their 24 h
// (their expires_at) are over. Anonymous writes (registrations, sessions,
// idempotency records, tokens) would otherwise grow the database without end. A sweep every 5 minutes purges each
// kind in batches of 500, at most MAX_BATCHES per kind per sweep, so one sweep never holds locks or the pool for
// long; several instances may sweep at once (rows are taken with SKIP LOCKED).
import * as repo from '../db/repositories/retention.js';
import type { Deps } from '../deps.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

export const RETENTION = {
  /** Tokens are deleted a day after they expire (a revoked token too, once past its expiry). */
  expiredTokensMs: DAY_MS,
  /** Clients that obtained no token for 90 days are deleted (and must register again). */
  idleClientsMs: 90 * DAY_MS,
  /** Agent carts not turned into a checkout session and untouched for 7 days are deleted. */
  openCartsMs: 7 * DAY_MS,
  /** Cancelled checkout sessions are deleted 30 days after the cancellation, unless an order refers to them. */
  canceledSessionsMs: 30 * DAY_MS,
  /** Live tokens a client may hold; issuing one more revokes the oldest. */
  liveTokensPerClient: 10,
} as const;

const SWEEP_EVERY_MS = 5 * 60 * 1000;
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
  const ago = (ms: number) => new Date(now - ms);
  return {
    idempotencyRecords: await inBatches((batch) =>
      repo.deleteExpiredIdempotencyRecords(deps.db, 'idempotency_keys', new Date(now), batch),
    ),
    protocolIdempotencyRecords: await inBatches((batch) =>
      repo.deleteExpiredIdempotencyRecords(deps.db, 'protocol_idempotency', new Date(now), batch),
    ),
    tokens: await inBatches((batch) => repo.deleteTokensExpiredBefore(deps.db, ago(RETENTION.expiredTokensMs), batch)),
    clients: await inBatches((batch) => repo.deleteIdleClients(deps.db, ago(RETENTION.idleClientsMs), batch)),
    openCarts: await inBatches((batch) =>
      repo.deleteCarts(deps.db, 'open', 'updated_at', ago(RETENTION.openCartsMs), batch),
    ),
    canceledSessions: await inBatches((batch) =>
      repo.deleteCarts(deps.db, 'canceled', 'canceled_at', ago(RETENTION.canceledSessionsMs), batch),
    ),
  };
}

/** Sweeps every 5 minutes (not keeping the process alive); returns the function that stops it. */
export function startRetentionSweeps(deps: Deps): () => void {
  const timer = setInterval(() => {
    sweepRetention(deps).then(
      (deleted) => deps.log.info({ deleted }, 'retention sweep'),
      (error: unknown) => deps.log.warn({ err: error }, 'retention sweep failed; the next one retries'),
    );
  }, SWEEP_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** After issuing a token: the client keeps at most its newest RETENTION.liveTokensPerClient live tokens. */
export function capLiveTokens(deps: Deps, clientId: string, now: Date): Promise<void> {
  return repo.revokeTokensBeyond(deps.db, clientId, RETENTION.liveTokensPerClient, now);
}
