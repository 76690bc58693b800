// Idempotency records of the ACP/UCP bindings. The (scope, key) primary key decides, across every instance, which
// answer a key keeps; the answer is kept as the exact bytes sent. A scope longer than 2 KiB is stored as its SHA-256
// (`sha256:<hex>`, see storedScope in src/services/idempotency/policies.ts).
import type { Db } from '../knex.js';
import { stillPricedAt } from './catalog-version.js';
import { takeOverConflict, type KeyClaimed } from './idempotency.js';
import { stillActiveToken } from './oauth.js';

export interface ProtocolIdempotencyRecord {
  scope: string;
  key: string;
  request_hash: string;
  /** `in_flight` records are written by earlier releases only, which claimed the key before the work. */
  state: 'in_flight' | 'completed';
  status_code: number | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
  created_at: Date;
  expires_at: Date;
}

/** A key's record as a create's read brings it (timestamps as JSON gives them). */
export type StoredAnswer = Omit<ProtocolIdempotencyRecord, 'scope' | 'key' | 'created_at' | 'expires_at'> & {
  created_at: string;
  expires_at: string;
};

/** Whether a create's answer took its key (with the session it reports). */
export type ProtocolCreateStored = KeyClaimed<StoredAnswer>;

/**
 * The key's record as JSON (a StoredAnswer), null when it has none: a column of the create's read (`scope`, `key`:
 * SQL expressions).
 */
export function protocolRecordOf(scope: string, key: string): string {
  return `(select row_to_json(record) from (
    select request_hash, state, status_code, response_body, response_headers, created_at, expires_at
    from protocol_idempotency where scope = ${scope} and key = ${key}
  ) as record)`;
}

/** A key's record, as a create's read brings it (its creation time exact, as a takeover names it); none: undefined. */
export async function findRecord(db: Db, scope: string, key: string): Promise<StoredAnswer | undefined> {
  const { rows } = (await db.raw(`select ${protocolRecordOf('?', '?')} as record`, [scope, key])) as {
    rows: Array<{ record: StoredAnswer | null }>;
  };
  return rows[0]?.record ?? undefined;
}

/** A key's answer, stored with the change it describes, kept until `expiresAt`. */
export interface ProtocolAnswer {
  scope: string;
  key: string;
  requestHash: string;
  response: { status: number; body: string; headers: Record<string, string> };
  /** When the request stored it: its record's creation time. */
  createdAt: Date;
  expiresAt: Date;
  /** The creation time of the stale record the request read and takes over, or null when it read none. */
  replaces: string | null;
}

const COLUMNS = 'scope, key, request_hash, state, status_code, response_body, response_headers, created_at, expires_at';

/** A key's completed answer takes the key, or replaces its stale record (see takeOverConflict). */
const answerConflict = (replaced: string) => takeOverConflict(COLUMNS, replaced);

/** The most answers INSERT_PROTOCOL_ANSWERS stores in one statement: each answer's body is a parameter of its own. */
export const MAX_ANSWERS_PER_STATEMENT = 16;

/**
 * A key's completed answer for each of many creates (bindings: protocolAnswersBindings), as the CTEs `answers` and
 * `claimed` (the (scope, key) of each answer stored). The answers must name distinct keys. Each body is bound as it is,
 * a parameter of its own (unused ones null), beside a JSON array of the rest of each answer naming its body's
 * position: escaped into the JSON, a body was written twice over in the service and parsed as JSON by PostgreSQL. An
 * answer priced from an earlier read (its record's `priced_at`: that read's catalogue version) claims its key only if
 * the catalogue is still at that version, so a key never holds an answer a fresh read would not give; one given under
 * an access token read earlier (`grant_token`: its hash) only if the token is still active then.
 */
export const INSERT_PROTOCOL_ANSWERS = `answers as (
  select answer.*, body.response_body
  from unnest(array[${Array.from({ length: MAX_ANSWERS_PER_STATEMENT }, () => '?::text').join(', ')}])
    with ordinality as body (response_body, body_index)
  join jsonb_to_recordset(?::jsonb) as answer (scope text, key text, request_hash text, status_code int,
    response_headers jsonb, created_at timestamptz, expires_at timestamptz, replaces timestamptz, priced_at bigint,
    grant_token text, body_index int) using (body_index)
), claimed as (
  insert into protocol_idempotency as record (${COLUMNS})
  select scope, key, request_hash, 'completed', status_code, response_body, response_headers, created_at, expires_at
  from answers
  where ${stillPricedAt('answers.priced_at')} and ${stillActiveToken('answers.grant_token', 'answers.created_at')}
  ${answerConflict('(select replaces from answers where answers.scope = record.scope and answers.key = record.key)')}
)`;

/**
 * An answer to store, priced at `pricedAt` (the catalogue version of an earlier read), or from its own read; given
 * under `grant`, the hash of an access token read earlier that the store is to confirm, or under none.
 */
export interface AnswerToStore {
  answer: ProtocolAnswer;
  pricedAt: string | undefined;
  grant?: string | undefined;
}

/**
 * Stores one key's answer as the creates' statement does (INSERT_PROTOCOL_ANSWERS), in `db` (the transaction of the
 * change it reports): it takes the key, or replaces the stale record the request read; false when another request's
 * answer holds the key (that request's transaction commits first: a concurrent insert waits for it on the primary key).
 */
export async function storeAnswer(db: Db, answer: ProtocolAnswer): Promise<boolean> {
  const { rows } = (await db.raw(
    `with ${INSERT_PROTOCOL_ANSWERS} select count(*)::int as stored from claimed`,
    protocolAnswersBindings([{ answer, pricedAt: undefined }]),
  )) as { rows: Array<{ stored: number }> };
  return rows[0]!.stored === 1;
}

/** The bindings of INSERT_PROTOCOL_ANSWERS, in its order, for at most MAX_ANSWERS_PER_STATEMENT answers. */
export function protocolAnswersBindings(answers: AnswerToStore[]): Array<string | null> {
  if (answers.length > MAX_ANSWERS_PER_STATEMENT)
    throw new Error(`At most ${MAX_ANSWERS_PER_STATEMENT} answers per statement, not ${answers.length}`);
  const records = answers.map(({ answer, pricedAt, grant }, index) => ({
    scope: answer.scope,
    key: answer.key,
    request_hash: answer.requestHash,
    status_code: answer.response.status,
    response_headers: answer.response.headers,
    created_at: answer.createdAt,
    expires_at: answer.expiresAt,
    replaces: answer.replaces,
    priced_at: pricedAt ?? null,
    grant_token: grant ?? null,
    body_index: index + 1,
  }));
  const unused = MAX_ANSWERS_PER_STATEMENT - answers.length;
  return [
    ...answers.map(({ answer }) => answer.response.body),
    ...Array.from({ length: unused }, () => null),
    JSON.stringify(records),
  ];
}
