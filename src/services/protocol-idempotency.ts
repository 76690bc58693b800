// Idempotency for the ACP and UCP bindings (D8 of the design). The request hash is SHA-256 over the RFC 8785 (JCS)
// form of the parsed body, so key order and `1.0` vs `1` do not matter while `null` vs absent and array order do.
// Every final answer below 500 is stored, as the exact bytes sent, in the same transaction as the change it reports:
// a replay is byte-identical, and a stored answer always describes a committed change. 5xx answers are never stored.
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import * as repo from '../db/repositories/protocol-idempotency.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';

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

type Claim =
  | { kind: 'run'; record: Pick<repo.ProtocolIdempotencyRecord, 'scope' | 'key' | 'created_at'> }
  | Exclude<IdempotentOutcome, { kind: 'ran' }>;

async function claim(deps: Deps, call: IdempotentCall, hash: string): Promise<Claim> {
  for (;;) {
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
    if (!existing) continue; // removed between our insert and read: try again
    const expired = new Date(existing.expires_at).getTime() <= now;
    const abandoned =
      existing.state === 'in_flight' && new Date(existing.created_at).getTime() + ABANDONED_AFTER_MS <= now;
    if (expired || abandoned) {
      await repo.deleteRecord(deps.db, existing);
      continue;
    }
    if (existing.request_hash !== hash) return { kind: 'conflict' };
    if (existing.state === 'in_flight') return { kind: 'in_flight' };
    return {
      kind: 'replayed',
      response: {
        status: existing.status_code!,
        body: existing.response_body!,
        headers: existing.response_headers ?? {},
      },
    };
  }
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
