// Idempotency for the ACP and UCP bindings (D8 of the design). The request hash is SHA-256 over the RFC 8785 (JCS)
// form of the parsed body, so key order and `1.0` vs `1` do not matter while `null` vs absent and array order do.
// Every final answer below 500 is stored, as the exact bytes sent, by the statement that stores the change it reports
// (a create's) or in its transaction (any other operation): a replay is byte-identical, a stored answer always
// describes a committed change, and a request that dies mid-way leaves its key free, as on the REST surface
// (src/services/idempotency.ts, whose staleness rule this shares). 5xx answers are never stored.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import * as repo from '../db/repositories/protocol-idempotency.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { isStale, untilSettled } from './idempotency.js';

/** 48 h: ACP asks for at least 24 h, UCP recommends 48 h. */
export const PROTOCOL_IDEMPOTENCY_RETENTION_MS = 48 * 60 * 60 * 1000;
/**
 * The longest scope stored as it is (UTF-8 bytes). A scope names the caller and the operation, and both come from the
 * request (a UCP profile URL, an ACP path): past PostgreSQL's btree row limit (about 2.7 kB for the primary key's scope
 * and key together) its insert failed. Longer ones are stored as their SHA-256; shorter ones as before, so records
 * stored by earlier releases still answer their keys. With a key of at most 255 characters (510 bytes), 2 KiB keeps
 * the pair under the limit.
 */
export const MAX_STORED_SCOPE_BYTES = 2048;

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

/** The scope as its records are keyed: itself, or when longer than MAX_STORED_SCOPE_BYTES its SHA-256. */
export function storedScope(scope: string): string {
  if (Buffer.byteLength(scope) <= MAX_STORED_SCOPE_BYTES) return scope;
  // Every scope as sent starts with its protocol and `|`, so this form cannot be a scope stored as it is.
  return `sha256:${createHash('sha256').update(scope).digest('hex')}`;
}

/** The call as its key's record is stored and read (see storedScope). */
function storedCall(call: IdempotentCall): IdempotentCall {
  const scope = storedScope(call.scope);
  return scope === call.scope ? call : { ...call, scope };
}

export function jcsHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalize(body ?? {}) ?? '{}')
    .digest('hex');
}

/** What a key's record answers a request with this hash: its answer, or `stale` when the request may take it over. */
function decide(
  record: repo.StoredAnswer,
  hash: string,
  now: number,
): { kind: 'stale' } | Exclude<IdempotentOutcome, { kind: 'ran' }> {
  if (isStale(record, now)) return { kind: 'stale' };
  if (record.request_hash !== hash) return { kind: 'conflict' };
  if (record.state === 'in_flight') return { kind: 'in_flight' };
  return {
    kind: 'replayed',
    response: { status: record.status_code!, body: record.response_body!, headers: record.response_headers ?? {} },
  };
}

/** Thrown inside an operation's transaction when another request's answer took the key first: it rolls back. */
class KeyAnsweredMeanwhile extends Error {
  override name = 'KeyAnsweredMeanwhile';
}

/** An operation's answer given before any transaction: a request refused for its body (see runIdempotently). */
export interface Refused {
  refused: ProtocolResponse;
}

/**
 * Runs `operation` in one transaction, or answers a request `refused` before it, in no transaction. Under a key
 * (`call`), the key's record is read first (replay, conflict, or an earlier release's in-flight record answer instead),
 * and the answer below 500 is stored in the operation's transaction (a refusal: by one statement), taking the key (or
 * its stale record): nothing marks the key while the operation runs, so a request that fails or dies mid-way leaves it
 * free and the retry runs at once. Two requests under one key may both run; the first to commit keeps its answer, and
 * the other's transaction rolls back (its insert waits for the first's commit on the primary key) and answers from the
 * record it then reads: at most MAX_SETTLE_ATTEMPTS reads (untilSettled).
 */
export async function runIdempotently(
  deps: Deps,
  call: IdempotentCall | undefined,
  operation: ((db: Db) => Promise<ProtocolResponse>) | Refused,
): Promise<IdempotentOutcome> {
  if (!call) {
    const response = 'refused' in operation ? operation.refused : await deps.db.transaction(operation);
    return { kind: 'ran', response };
  }
  const keyed = storedCall(call);
  const hash = jcsHash(keyed.body);
  return untilSettled<IdempotentOutcome>(async () => {
    const record = await repo.findRecord(deps.db, keyed.scope, keyed.key);
    const decided = record && decide(record, hash, deps.now());
    if (decided && decided.kind !== 'stale') return decided;
    /** Stores the answer under the key, in `db`; throws KeyAnsweredMeanwhile when another answer holds the key. */
    const stored = async (db: Db, answer: ProtocolResponse) => {
      if (answer.status >= 500) return answer;
      const taken = await repo.storeAnswer(db, keyAnswer(deps, keyed, hash, answer, record?.created_at ?? null));
      if (!taken) throw new KeyAnsweredMeanwhile();
      return answer;
    };
    try {
      const response =
        'refused' in operation
          ? await stored(deps.db, operation.refused)
          : await deps.db.transaction(async (trx) => stored(trx, await operation(trx)));
      return { kind: 'ran', response };
    } catch (error) {
      if (error instanceof KeyAnsweredMeanwhile) return undefined; // read the record that answered first
      throw error;
    }
  });
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
  request: IdempotentCall | undefined,
  steps: CreateSteps<Reads>,
): Promise<IdempotentOutcome> {
  const call = request && storedCall(request);
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
  const stored = await answered.store(keyAnswer(deps, storedCall(call), jcsHash(call.body), answered.response, null));
  return stored.stored ? answered.response : undefined;
}
