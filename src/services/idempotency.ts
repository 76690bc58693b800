// Idempotency-Key handling (ACP semantics): same key + same body replays the original answer; same key + another
// body is 422 idempotency_conflict; same key while the first is running is 409 idempotency_in_flight. Records live in
// the database (24 h), so every instance sees them. Only successes are stored: a failed attempt frees the key.
import { createHash } from 'node:crypto';
import * as repo from '../db/repositories/idempotency.js';
import type { Deps } from '../deps.js';
import { Conflict, Unprocessable } from '../domain/errors.js';

/**
 * An in-flight claim is a lease: it expires this long after it was last renewed, and the request holding it renews it
 * every RENEW_EVERY_MS while it works. A request that died (its process killed) stops renewing, so a retry can take
 * the key over within LEASE_MS instead of waiting for a fixed age.
 */
export const LEASE_MS = 5_000;
const RENEW_EVERY_MS = 1_500;
/** Backstop for in-flight records written before claims were leases (their expiry is the 24 h retention). */
const ABANDONED_AFTER_MS = 60 * 1000;
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

export interface IdempotentRequest {
  scope: string;
  key: string;
  body: unknown;
}

export interface StoredResult {
  status: number;
  body: unknown;
  apiVersion: string;
}

/** `claimedAt` identifies this request's record, so it can release exactly that one. */
export type Claim = { kind: 'run'; claimedAt: Date } | { kind: 'replay'; result: StoredResult };

/** JSON with object keys sorted, so bodies equal as parsed JSON hash the same whatever their key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function requestHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(body ?? null))
    .digest('hex');
}

function isStale(record: repo.IdempotencyRecord, now: number): boolean {
  if (new Date(record.expires_at).getTime() <= now) return true;
  return record.state === 'in_flight' && new Date(record.created_at).getTime() + ABANDONED_AFTER_MS <= now;
}

function outcomeOf(record: repo.IdempotencyRecord, hash: string): Claim {
  if (record.request_hash !== hash) {
    throw new Unprocessable(
      'idempotency_conflict',
      'This idempotency key was already used with a different request; use a new key for a new request.',
      {
        param: 'Idempotency-Key',
      },
    );
  }
  if (record.state === 'in_flight') {
    throw new Conflict(
      'idempotency_in_flight',
      'A request with this idempotency key is still being processed; retry after a moment.',
      IN_FLIGHT_RETRY_AFTER_SECONDS,
      { param: 'Idempotency-Key' },
    );
  }
  return {
    kind: 'replay',
    result: { status: record.status_code!, body: record.response_body, apiVersion: record.api_version! },
  };
}

/** Claims the key for this request, or says how to answer instead (replay, conflict, in flight). */
export async function claimIdempotencyKey(deps: Deps, request: IdempotentRequest): Promise<Claim> {
  const hash = requestHash(request.body);
  for (;;) {
    const now = deps.now();
    const claimedAt = new Date(now);
    const claimed = await repo.insertInFlight(deps.db, {
      scope: request.scope,
      key: request.key,
      request_hash: hash,
      created_at: claimedAt,
      expires_at: new Date(now + LEASE_MS),
    });
    if (claimed) return { kind: 'run', claimedAt };
    const existing = await repo.findRecord(deps.db, request.scope, request.key);
    if (!existing) continue; // removed between our insert and read: try again
    if (isStale(existing, now)) {
      await repo.deleteRecord(deps.db, existing);
      continue;
    }
    return outcomeOf(existing, hash);
  }
}

/** Runs `work` while renewing this request's lease on the key, so the key stays claimed however long it takes. */
export async function whileClaimed<T>(
  deps: Deps,
  request: IdempotentRequest,
  claimedAt: Date,
  work: () => Promise<T>,
): Promise<T> {
  const renew = setInterval(() => {
    repo
      .renewInFlightRecord(
        deps.db,
        { scope: request.scope, key: request.key, created_at: claimedAt },
        new Date(deps.now() + LEASE_MS),
      )
      .catch((error) => deps.log.warn({ err: error }, 'could not renew idempotency claim'));
  }, RENEW_EVERY_MS);
  renew.unref();
  try {
    return await work();
  } finally {
    clearInterval(renew);
  }
}

/** The successful answer as the key keeps it (24 h by default, RETENTION_IDEMPOTENCY_SECONDS); the repositories store it with the write it describes. */
export function keyAnswer(deps: Deps, request: IdempotentRequest, result: StoredResult): repo.KeyAnswer {
  return {
    scope: request.scope,
    key: request.key,
    ...result,
    expiresAt: new Date(deps.now() + deps.config.retention.idempotencyMs),
  };
}

/**
 * Frees the key after a failed attempt, so a retry runs again (a failure is never replayed). Only this request's own
 * in-flight record goes: if another request took the key over meanwhile, its record stays.
 */
export async function releaseIdempotencyKey(deps: Deps, request: IdempotentRequest, claimedAt: Date): Promise<void> {
  await repo.deleteInFlightRecord(deps.db, { scope: request.scope, key: request.key, created_at: claimedAt });
}
