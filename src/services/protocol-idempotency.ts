// Idempotency for the ACP and UCP bindings (D8 of the design). The request hash is SHA-256 over the RFC 8785 (JCS)
// form of the parsed body, so key order and `1.0` vs `1` do not matter while `null` vs absent and array order do.
// Every final answer below 500 is stored, as the exact bytes sent, in the same transaction as the change it reports:
// a replay is byte-identical, and a stored answer always describes a committed change. 5xx answers are never stored.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import * as repo from '../db/repositories/protocol-idempotency.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { untilSettled } from './idempotency.js';

/** 48 h: ACP asks for at least 24 h, UCP recommends 48 h. */
export const PROTOCOL_IDEMPOTENCY_RETENTION_MS = 48 * 60 * 60 * 1000;
/** An in-flight record older than this belongs to a request that died mid-way; a retry may take the key over. */
const ABANDONED_AFTER_MS = 60 * 1000;

/** A finished HTTP answer: the exact body bytes and the headers that belong to it. */
export interface ProtocolResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

export interface IdempotentCall {
  /** `"{protocol}|{identity}|{operation}"`, e.g. `acp|client_1|POST /acp/checkout_sessions`. */
  scope: string;
  key: string;
  /** The parsed body (an absent body counts as `{}`). */
  body: unknown;
}

export type IdempotentOutcome =
  | { kind: 'ran'; response: ProtocolResponse }
  | { kind: 'replayed'; response: ProtocolResponse }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

// The package is CommonJS (`module.exports = serialize`) with ES-module typings: the default import is the function.
export const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export function jcsHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalize(body ?? {}) ?? '{}')
    .digest('hex');
}

/** A key's record as read, by a claim (a row) or by a create's read (JSON: timestamps as text). */
type ReadRecord = Pick<
  repo.ProtocolIdempotencyRecord,
  'request_hash' | 'state' | 'status_code' | 'response_body' | 'response_headers'
> & { created_at: Date | string; expires_at: Date | string };

/** What a key's record answers a request with this hash: its answer, or `stale` when the request may take it over. */
function decide(
  record: ReadRecord,
  hash: string,
  now: number,
): { kind: 'stale' } | Exclude<IdempotentOutcome, { kind: 'ran' }> {
  const expired = new Date(record.expires_at).getTime() <= now;
  const abandoned = record.state === 'in_flight' && new Date(record.created_at).getTime() + ABANDONED_AFTER_MS <= now;
  if (expired || abandoned) return { kind: 'stale' };
  if (record.request_hash !== hash) return { kind: 'conflict' };
  if (record.state === 'in_flight') return { kind: 'in_flight' };
  return {
    kind: 'replayed',
    response: { status: record.status_code!, body: record.response_body!, headers: record.response_headers ?? {} },
  };
}

type Claim =
  | { kind: 'run'; record: Pick<repo.ProtocolIdempotencyRecord, 'scope' | 'key' | 'created_at'> }
  | Exclude<IdempotentOutcome, { kind: 'ran' }>;

/**
 * Takes the key, or answers from its record. A record that vanishes between the insert and the read, or a stale one
 * deleted to take it over, is tried again, at most MAX_SETTLE_ATTEMPTS times (untilSettled): then NotSettled.
 */
async function claim(deps: Deps, call: IdempotentCall, hash: string): Promise<Claim> {
  return untilSettled<Claim>(async () => {
    const now = deps.now();
    const record = { scope: call.scope, key: call.key, created_at: new Date(now) };
    if (
      await repo.insertInFlight(deps.db, {
        ...record,
        request_hash: hash,
        expires_at: new Date(now + PROTOCOL_IDEMPOTENCY_RETENTION_MS),
      })
    )
      return { kind: 'run', record };
    const existing = await repo.findRecord(deps.db, call.scope, call.key);
    if (!existing) return undefined; // removed between our insert and read: try again
    const decided = decide(existing, hash, now);
    if (decided.kind !== 'stale') return decided;
    await repo.deleteRecord(deps.db, existing);
    return undefined;
  });
}

/**
 * Runs `operation` in one transaction. Under a key (`call`), the key is claimed first (replay, conflict or in flight
 * answer instead), and the answer is recorded in the operation's transaction; a failure or a 5xx frees the key.
 */
export async function runIdempotently(
  deps: Deps,
  call: IdempotentCall | undefined,
  operation: (db: Db) => Promise<ProtocolResponse>,
): Promise<IdempotentOutcome> {
  if (!call) return { kind: 'ran', response: await deps.db.transaction(operation) };
  const claimed = await claim(deps, call, jcsHash(call.body));
  if (claimed.kind !== 'run') return claimed;
  try {
    const response = await deps.db.transaction(async (trx) => {
      const answer = await operation(trx);
      if (answer.status < 500) await repo.completeRecord(trx, claimed.record, answer);
      return answer;
    });
    if (response.status >= 500) await repo.deleteRecord(deps.db, claimed.record, true);
    return { kind: 'ran', response };
  } catch (error) {
    await repo
      .deleteRecord(deps.db, claimed.record, true)
      .catch((releaseError: unknown) => deps.log.warn({ err: releaseError }, 'could not release an idempotency key'));
    throw error;
  }
}

/** A create's answer, and how to store it with what it created, from what the create's read brought. */
export interface CreateAnswer {
  response: ProtocolResponse;
  /**
   * Stores what the answer reports with the key's `answer` (none without a key), in one statement: stored, or not
   * (another request's answer holds the key, or what was read changed meanwhile), with the key's record when the
   * statement saw one; the create then answers from that record, or reads and answers again.
   */
  store(answer: repo.ProtocolAnswer | undefined): Promise<repo.ProtocolCreateStored>;
}

/** The answer a request stores under its key, replacing the stale record created at `replaces` (if any). */
function keyAnswer(
  deps: Deps,
  call: IdempotentCall,
  hash: string,
  response: ProtocolResponse,
  replaces: string | null,
): repo.ProtocolAnswer {
  const now = deps.now();
  return {
    scope: call.scope,
    key: call.key,
    requestHash: hash,
    response,
    createdAt: new Date(now),
    expiresAt: new Date(now + PROTOCOL_IDEMPOTENCY_RETENTION_MS),
    replaces,
  };
}

/** How a create reads, and answers from what it read. */
export interface CreateSteps<Reads> {
  /**
   * Reads an earlier create made, to try first without reading (undefined: none). The answer is given only if stored,
   * which the store confirms against what was read since (see earlier-reads.ts); otherwise the create reads.
   */
  earlier: Reads | undefined;
  /** Reads the key's record with whatever the create needs. */
  read(key: Pick<IdempotentCall, 'scope' | 'key'> | undefined): Promise<{ reads: Reads; record?: repo.StoredAnswer }>;
  /** The answer to the reads, or, for earlier reads, undefined when only a fresh read may give it. */
  answer(reads: Reads, earlier: boolean): CreateAnswer | undefined;
}

/**
 * Runs a create in two statements and no transaction: `read` brings the key's record with whatever the create needs,
 * and the answer is stored with the session it reports in one statement; a create like an earlier one tries the
 * earlier reads first, in the one statement that stores it. A replay, a conflict or a request still in flight (a
 * record of an earlier release) answers from the record, as `runIdempotently` does; a stale record is taken over.
 * Two requests under one key both run; the first to store its answer wins, and the other replays it (or conflicts),
 * from the record its store saw, else from a new read: exactly one session is stored. A create whose store keeps
 * failing so gives up after MAX_SETTLE_ATTEMPTS reads (untilSettled): answered as unavailable, nothing stored.
 */
export async function createIdempotently<Reads>(
  deps: Deps,
  call: IdempotentCall | undefined,
  steps: CreateSteps<Reads>,
): Promise<IdempotentOutcome> {
  const hash = call && jcsHash(call.body);
  /** Answers from a key's record: undefined when the request may take it over (or there is none). */
  const fromRecord = (record: repo.StoredAnswer | undefined) => {
    if (!call || !record) return undefined;
    const decided = decide(record, hash!, deps.now());
    return decided.kind === 'stale' ? undefined : decided;
  };
  /** The outcome of answering `reads` (with the key's `record` as read), or undefined to read again. */
  const attempt = async (reads: Reads, record: repo.StoredAnswer | undefined, earlier: boolean) => {
    const answered = steps.answer(reads, earlier);
    if (!answered) return undefined;
    const { response, store } = answered;
    if (response.status >= 500) return { kind: 'ran' as const, response };
    const stored = await store(call && keyAnswer(deps, call, hash!, response, record?.created_at ?? null));
    return stored.stored ? { kind: 'ran' as const, response } : fromRecord(stored.keyRecord);
  };
  const first = steps.earlier === undefined ? undefined : await attempt(steps.earlier, undefined, true);
  return (
    first ??
    untilSettled<IdempotentOutcome>(async () => {
      const { reads, record } = await steps.read(call && { scope: call.scope, key: call.key });
      return fromRecord(record) ?? (await attempt(reads, record, false));
    })
  );
}

/**
 * Only the first of createIdempotently's attempts, from an earlier create's reads, whose store also confirms what the
 * caller took from an earlier read (an access token: `answer`'s store says how): the answer if it was stored, else
 * undefined, with nothing stored and nothing answered from the key's record, which the caller may only answer once
 * confirmed (then by createIdempotently).
 */
export async function createFromEarlierReads<Reads>(
  deps: Deps,
  call: IdempotentCall,
  earlier: Reads,
  answer: (reads: Reads) => CreateAnswer | undefined,
): Promise<ProtocolResponse | undefined> {
  const answered = answer(earlier);
  if (!answered || answered.response.status >= 500) return undefined;
  const stored = await answered.store(keyAnswer(deps, call, jcsHash(call.body), answered.response, null));
  return stored.stored ? answered.response : undefined;
}
