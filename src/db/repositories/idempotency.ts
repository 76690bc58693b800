// Idempotency-Key records. The (scope, key) primary key decides, across every instance, which request runs: a key's
// record is written by the statement that stores the session it answers, so a stored record always describes a
// stored session and a failed create leaves none.
import { stillPricedAt } from './catalog-version.js';

/** A key's record as the create's read brings it (timestamps as JSON gives them). */
export interface IdempotencyRecord {
  request_hash: string;
  /** `in_flight` records are written by earlier releases only, which claimed the key before building the session. */
  state: 'in_flight' | 'completed';
  status_code: number | null;
  response_body: unknown;
  api_version: string | null;
  created_at: string;
  expires_at: string;
}

/** The key's record as JSON, null when it has none: a column of the create's read (`scope`, `key`: SQL expressions). */
export function keyRecordOf(scope: string, key: string): string {
  return `(select row_to_json(record) from (
    select request_hash, state, status_code, response_body, api_version, created_at, expires_at
    from idempotency_keys where scope = ${scope} and key = ${key}
  ) as record)`;
}

/**
 * Whether a write that claims a key with its answer stored it; when it did not, the key's record as that statement saw
 * it (as of its start: one committed meanwhile is not there), if it has one.
 */
export type KeyClaimed<KeyRecord> = { stored: true } | { stored: false; keyRecord: KeyRecord | undefined };

/** A key's answer, stored with the write it describes, kept until `expiresAt`. */
export interface KeyAnswer {
  scope: string;
  key: string;
  requestHash: string;
  status: number;
  body: unknown;
  apiVersion: string;
  /** When the request stored it: its record's creation time. */
  createdAt: Date;
  expiresAt: Date;
  /** The creation time of the stale record the request read and takes over, or null when it read none. */
  replaces: string | null;
}

const RECORD_COLUMNS = `scope, key, request_hash, state, status_code, response_body, api_version, created_at, expires_at`;

/**
 * The tail of the insert of a key's answer (a CTE of the repositories' combined writes): a key with no record takes
 * the answer; a key whose record is the stale one the request read (`replaced`, an expression of `record`, the row in
 * the table) has it replaced; any other record (another request stored its answer first) is left alone and the key
 * is not returned. Concurrent inserts of one key wait for each other on the primary key, so exactly one wins. Every
 * column of the record (`columns`, as listed in the insert) but its key is replaced; the protocols' records too.
 */
export function takeOverConflict(columns: string, replaced: string): string {
  const replacing = columns
    .split(',')
    .map((column) => column.trim())
    .filter((column) => column !== 'scope' && column !== 'key')
    .map((column) => `${column} = excluded.${column}`);
  return `on conflict (scope, key) do update
    set ${replacing.join(', ')}
    where record.created_at = ${replaced}
  returning record.scope, record.key`;
}

const answerConflict = (replaced: string) => takeOverConflict(RECORD_COLUMNS, replaced);

/**
 * A key's answer as a record of the JSON array the batched insert reads (see ANSWERS_RECORDSET), priced at `pricedAt`
 * (the catalogue version of an earlier read), or from its own read.
 */
export function answerRecord(answer: KeyAnswer, pricedAt: string | undefined) {
  return {
    scope: answer.scope,
    key: answer.key,
    request_hash: answer.requestHash,
    status_code: answer.status,
    response_body: answer.body,
    api_version: answer.apiVersion,
    created_at: answer.createdAt,
    expires_at: answer.expiresAt,
    replaces: answer.replaces,
    priced_at: pricedAt ?? null,
  };
}

/** The records of answerRecord, from a JSON array bound at `?`. */
export const ANSWERS_RECORDSET = `jsonb_to_recordset(?::jsonb) as answer (scope text, key text, request_hash text,
    status_code int, response_body jsonb, api_version text, created_at timestamptz, expires_at timestamptz,
    replaces timestamptz, priced_at bigint)`;

/**
 * Inserts many keys' answers, read from the CTE `answers` (ANSWERS_RECORDSET), as answerConflict says; an answer
 * priced from an earlier read only if the catalogue is still at that read's version (its `priced_at`), so a key never
 * holds an answer a fresh read would not give.
 */
export const INSERT_ANSWERS = `insert into idempotency_keys as record (${RECORD_COLUMNS})
  select scope, key, request_hash, 'completed', status_code, response_body, api_version, created_at, expires_at
  from answers
  where ${stillPricedAt('answers.priced_at')}
  ${answerConflict('(select replaces from answers where answers.scope = record.scope and answers.key = record.key)')}`;
