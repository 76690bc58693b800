// Idempotency-Key handling (ACP semantics): same key + same body replays the original answer; same key + another
// body is 422 idempotency_conflict. Records live in the database (24 h), so every instance sees them. A key is claimed
// by the statement that stores what it answers (see carts.insertCart), so only successes are ever stored and
// concurrent requests with one key store one answer: the others find it and replay it. A key still held by an
// in-flight record (written by earlier releases, which claimed the key before the work) is 409 idempotency_in_flight.
import { createHash } from 'node:crypto';
import type * as repo from '../db/repositories/idempotency.js';
import type { Deps } from '../deps.js';
import { Conflict, NotSettled, Unprocessable } from '../domain/errors.js';

/** Backstop for in-flight records that were never given a lease (their expiry is the 24 h retention). */
const ABANDONED_AFTER_MS = 60 * 1000;
const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;
/**
 * How many times a request reads and tries to store before giving up (untilSettled). One retry settles a request whose
 * key another request answered (or freed) first (the next read finds that); more are needed only while keys or the
 * catalogue keep changing under it.
 */
export const MAX_SETTLE_ATTEMPTS = 5;

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

/**
 * `run`: the key is free (no record, or a stale one, which the answer `replaces`): build the answer and store it with
 * its write. `replay`: the key holds this request's answer.
 */
export type Claim =
  | { kind: 'run'; requestHash: string; claimedAt: Date; replaces: string | null }
  | { kind: 'replay'; result: StoredResult };

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

/** A key's record as both surfaces read it (the REST one, and the protocols' in src/services/protocol-idempotency.ts). */
export type KeyRecordTimes = Pick<repo.IdempotencyRecord, 'state'> & {
  created_at: Date | string;
  expires_at: Date | string;
};

/**
 * Whether a request may take the key over from its record: expired, or in flight for ABANDONED_AFTER_MS. Neither
 * surface writes in-flight records any more (a key is claimed by the statement that stores its answer, so a crash
 * leaves the key free); an earlier release's are taken over after this backstop.
 */
export function isStale(record: KeyRecordTimes, now: number): boolean {
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

/** How this request is answered, given its key's record as the create's read found it (replay, conflict, in flight). */
export function idempotencyClaim(
  deps: Deps,
  request: IdempotentRequest,
  record: repo.IdempotencyRecord | undefined,
): Claim {
  if (record && !isStale(record, deps.now())) return outcomeOf(record, requestHash(request.body));
  return freeKeyClaim(deps, request, record?.created_at ?? null);
}

/** The claim of a key found free: without a record, or (`replaces`) with the stale one created then. */
export function freeKeyClaim(
  deps: Deps,
  request: IdempotentRequest,
  replaces: string | null = null,
): Extract<Claim, { kind: 'run' }> {
  return { kind: 'run', requestHash: requestHash(request.body), claimedAt: new Date(deps.now()), replaces };
}

/** The successful answer as the key keeps it (24 h by default, RETENTION_IDEMPOTENCY_SECONDS); the repositories store it with the write it describes. */
export function keyAnswer(
  deps: Deps,
  request: IdempotentRequest,
  claim: Extract<Claim, { kind: 'run' }>,
  result: StoredResult,
): repo.KeyAnswer {
  return {
    scope: request.scope,
    key: request.key,
    requestHash: claim.requestHash,
    ...result,
    createdAt: claim.claimedAt,
    expiresAt: new Date(deps.now() + deps.config.retention.idempotencyMs),
    replaces: claim.replaces,
  };
}

/**
 * Runs a request's `attempt` (a create's read then store, a protocol key's claim) until it settles: an attempt answers
 * its result, or undefined when what it read changed before it could store (nothing was stored), and the next attempt
 * reads again. After MAX_SETTLE_ATTEMPTS unsettled attempts the request gives up with NotSettled, having stored nothing.
 */
export async function untilSettled<Result>(attempt: () => Promise<Result | undefined>): Promise<Result> {
  for (let attempts = 0; attempts < MAX_SETTLE_ATTEMPTS; attempts++) {
    const result = await attempt();
    if (result !== undefined) return result;
  }
  throw new NotSettled(MAX_SETTLE_ATTEMPTS);
}
