// The two ways a request runs under its key, for every surface (its KeyPolicy says what differs). Claim-with-write: a
// create reads its key's record with what it needs, and one statement stores its answer with the write it reports.
// Claim-first: an operation reads the key's record, then runs in one transaction that stores its answer. Either way
// nothing marks a key while its request runs, so a request that fails or dies leaves the key free, and of two
// requests under one key the first to store its answer keeps it, the other answering from that record.
import type { Db } from '../../db/knex.js';
import type { KeyClaimed } from '../../db/repositories/idempotency.js';
import type { Deps } from '../../deps.js';
import { NotSettled } from '../../domain/errors.js';
import { decide, type KeyRecordState } from './decide.js';
import type { KeyClaim, KeyPolicy } from './policies.js';

/**
 * How many times a request reads and tries to store before giving up (untilSettled). One retry settles a request whose
 * key another request answered (or freed) first (the next read finds that); more are needed only while keys or the
 * catalogue keep changing under it.
 */
export const MAX_SETTLE_ATTEMPTS = 5;

export interface IdempotentRequest {
  /** Who and what the key is for (see each policy's `scope`). */
  scope: string;
  key: string;
  /** The parsed body, as the policy fingerprints it. */
  body: unknown;
}

/** How a request under a key (or none) was answered: the surfaces render each kind in their own terms. */
export type KeyOutcome<Answer> =
  { kind: 'ran'; answer: Answer } | { kind: 'replayed'; answer: Answer } | { kind: 'conflict' } | { kind: 'in_flight' };

/** The outcomes that answer a request without running it: the key holds another request's answer, or one in flight. */
export type KeyRefusal = Extract<KeyOutcome<never>, { kind: 'conflict' | 'in_flight' }>;

/**
 * Runs a request's `attempt` until it settles: an attempt answers its result, or undefined when what it read changed
 * before it could store (nothing was stored), and the next attempt reads again. After MAX_SETTLE_ATTEMPTS unsettled
 * attempts the request gives up with NotSettled, having stored nothing.
 */
export async function untilSettled<Result>(attempt: () => Promise<Result | undefined>): Promise<Result> {
  for (let attempts = 0; attempts < MAX_SETTLE_ATTEMPTS; attempts++) {
    const result = await attempt();
    if (result !== undefined) return result;
  }
  throw new NotSettled(MAX_SETTLE_ATTEMPTS);
}

/** A request as its records are keyed (see KeyPolicy.storedScope), and its fingerprint. */
function keyed<Answer, Record extends KeyRecordState, Stored>(
  policy: KeyPolicy<Answer, Record, Stored>,
  request: IdempotentRequest,
) {
  return { scope: policy.storedScope(request.scope), key: request.key, hash: policy.fingerprint(request.body) };
}

type Keyed = ReturnType<typeof keyed>;

/** The claim an answer stores under the key, replacing the stale record created at `replaces` (if any). */
function claimOf(
  deps: Deps,
  policy: Pick<KeyPolicy<unknown, KeyRecordState, unknown>, 'retentionMs'>,
  call: Keyed,
  replaces: string | null,
): KeyClaim {
  const now = deps.now();
  return {
    scope: call.scope,
    key: call.key,
    requestHash: call.hash,
    createdAt: new Date(now),
    expiresAt: new Date(now + policy.retentionMs(deps.config.retention)),
    replaces,
  };
}

/** The answer a key's record gives (a replay, a conflict, in flight), or undefined when the request may take it. */
function answeredBy<Answer, Record extends KeyRecordState, Stored>(
  deps: Deps,
  policy: KeyPolicy<Answer, Record, Stored>,
  call: Keyed,
  record: Record | undefined,
): Exclude<KeyOutcome<Answer>, { kind: 'ran' }> | undefined {
  const decided = decide(record, call.hash, deps.now());
  if (decided.kind === 'fresh') return undefined;
  // Every outcome returned here is the request's answer: counted once (storefront_idempotency_outcomes_total).
  deps.metrics?.idempotency.labels(decided.kind === 'replay' ? 'replayed' : decided.kind).inc();
  return decided.kind === 'replay' ? { kind: 'replayed', answer: policy.replayOf(decided.record) } : decided;
}

/** Thrown inside an operation's transaction when another request's answer took the key first: it rolls back. */
class KeyAnsweredMeanwhile extends Error {
  override name = 'KeyAnsweredMeanwhile';
}

/** Where claim-first reads a key's record, and stores an answer in the operation's transaction (false: key taken). */
export interface KeyRecords<Record, Stored> {
  find(db: Db, scope: string, key: string): Promise<Record | undefined>;
  store(db: Db, stored: Stored): Promise<boolean>;
}

/** An operation's answer given before any transaction: a request refused for its body (see claimFirst). */
export interface Refused<Answer> {
  refused: Answer;
}

/**
 * Claim-first: runs `operation` in one transaction, or answers a request `refused` before it, in no transaction. Under
 * a key, the key's record is read first (replay, conflict, or an earlier release's in-flight record answer instead),
 * and an answer the policy keeps is stored in the operation's transaction (a refusal: by one statement), taking the
 * key (or its stale record). Two requests under one key may both run; the first to commit keeps its answer, and the
 * other's transaction rolls back (its insert waits for the first's commit on the primary key) and answers from the
 * record it then reads: at most MAX_SETTLE_ATTEMPTS reads (untilSettled).
 */
export async function claimFirst<Answer, Record extends KeyRecordState, Stored>(
  deps: Deps,
  policy: KeyPolicy<Answer, Record, Stored> & { records: KeyRecords<Record, Stored> },
  request: IdempotentRequest | undefined,
  operation: ((db: Db) => Promise<Answer>) | Refused<Answer>,
): Promise<KeyOutcome<Answer>> {
  if (!request) {
    const answer = 'refused' in operation ? operation.refused : await deps.db.transaction(operation);
    return { kind: 'ran', answer };
  }
  const call = keyed(policy, request);
  return untilSettled<KeyOutcome<Answer>>(async () => {
    const record = await policy.records.find(deps.db, call.scope, call.key);
    const answered = answeredBy(deps, policy, call, record);
    if (answered) return answered;
    /** Stores the answer under the key, in `db`; throws KeyAnsweredMeanwhile when another answer holds the key. */
    const stored = async (db: Db, answer: Answer) => {
      if (!policy.keeps(answer)) return answer;
      const claim = claimOf(deps, policy, call, record?.created_at ?? null);
      if (!(await policy.records.store(db, policy.toStore(claim, answer)))) throw new KeyAnsweredMeanwhile();
      return answer;
    };
    try {
      const answer =
        'refused' in operation
          ? await stored(deps.db, operation.refused)
          : await deps.db.transaction(async (trx) => stored(trx, await operation(trx)));
      return { kind: 'ran', answer };
    } catch (error) {
      if (error instanceof KeyAnsweredMeanwhile) return undefined; // read the record that answered first
      throw error;
    }
  });
}

/** A create's answer, and how to store it with what it created, from what the create's read brought. */
export interface WriteAnswer<Answer, Record, Stored> {
  answer: Answer;
  /**
   * Stores what the answer reports with the key's `stored` record (none without a key), in one statement: stored, or
   * not (another request's answer holds the key, or what was read changed meanwhile), with the key's record when the
   * statement saw one; the create then answers from that record, or reads and answers again.
   */
  store(stored: Stored | undefined): Promise<KeyClaimed<Record>>;
}

/** How a create reads, and answers from what it read. */
export interface WriteSteps<Reads, Answer, Record, Stored> {
  /**
   * Reads an earlier create made, to try first without reading (undefined: none). The answer is given only if stored,
   * which the store confirms against what was read since (see earlier-reads.ts); otherwise the create reads.
   */
  earlier: Reads | undefined;
  /** Reads the key's record (as stored: see KeyPolicy.storedScope) with whatever the create needs. */
  read(key: { scope: string; key: string } | undefined): Promise<{ reads: Reads; record?: Record | undefined }>;
  /** The answer to the reads, or, for earlier reads, undefined when only a fresh read may give it. */
  answer(reads: Reads, earlier: boolean): WriteAnswer<Answer, Record, Stored> | undefined;
}

/**
 * Claim-with-write: a create in two statements and no transaction. `read` brings the key's record with whatever the
 * create needs, and the answer is stored with what it reports in one statement; a create like an earlier one tries
 * the earlier reads first, in the one statement that stores it. A replay, a conflict or a request still in flight (a
 * record of an earlier release) answers from the record; a stale record is taken over. Two requests under one key
 * both run; the first to store its answer wins, and the other replays it (or conflicts), from the record its store
 * saw, else from a new read: exactly one is stored. A create whose store keeps failing so gives up after
 * MAX_SETTLE_ATTEMPTS reads (untilSettled), storing nothing.
 */
export async function claimWithWrite<Reads, Answer, Record extends KeyRecordState, Stored>(
  deps: Deps,
  policy: KeyPolicy<Answer, Record, Stored>,
  request: IdempotentRequest | undefined,
  steps: WriteSteps<Reads, Answer, Record, Stored>,
): Promise<KeyOutcome<Answer>> {
  const call = request && keyed(policy, request);
  const fromRecord = (record: Record | undefined) => (call ? answeredBy(deps, policy, call, record) : undefined);
  /** The outcome of answering `reads` (with the key's `record` as read), or undefined to read again. */
  const attempt = async (
    reads: Reads,
    record: Record | undefined,
    earlier: boolean,
  ): Promise<KeyOutcome<Answer> | undefined> => {
    const answered = steps.answer(reads, earlier);
    if (!answered) return undefined;
    const { answer, store } = answered;
    if (!policy.keeps(answer)) return { kind: 'ran', answer };
    const stored = await store(call && policy.toStore(claimOf(deps, policy, call, record?.created_at ?? null), answer));
    return stored.stored ? { kind: 'ran', answer } : fromRecord(stored.keyRecord);
  };
  const first = steps.earlier === undefined ? undefined : await attempt(steps.earlier, undefined, true);
  return (
    first ??
    untilSettled<KeyOutcome<Answer>>(async () => {
      const { reads, record } = await steps.read(call && { scope: call.scope, key: call.key });
      return fromRecord(record) ?? (await attempt(reads, record, false));
    })
  );
}

/**
 * Only claim-with-write's first attempt, from an earlier create's reads, whose store also confirms what the caller
 * took from an earlier read (an access token: `answer`'s store says how): the answer if it was stored, else undefined,
 * with nothing stored and nothing answered from the key's record, which the caller may only answer once confirmed
 * (then by claimWithWrite).
 */
export async function claimWithEarlierWrite<Reads, Answer, Record extends KeyRecordState, Stored>(
  deps: Deps,
  policy: KeyPolicy<Answer, Record, Stored>,
  request: IdempotentRequest,
  earlier: Reads,
  answer: (reads: Reads) => WriteAnswer<Answer, Record, Stored> | undefined,
): Promise<Answer | undefined> {
  const answered = answer(earlier);
  if (!answered || !policy.keeps(answered.answer)) return undefined;
  const call = keyed(policy, request);
  const stored = await answered.store(policy.toStore(claimOf(deps, policy, call, null), answered.answer));
  return stored.stored ? answered.answer : undefined;
}
