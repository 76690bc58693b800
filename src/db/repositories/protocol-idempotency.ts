// Idempotency records of the ACP/UCP bindings. The (scope, key) primary key decides, across every instance, which
// request runs; the answer is kept as the exact bytes sent.
import type { Db } from '../knex.js';

export interface ProtocolIdempotencyRecord {
  scope: string;
  key: string;
  request_hash: string;
  state: 'in_flight' | 'completed';
  status_code: number | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
  created_at: Date;
  expires_at: Date;
}

type Identity = Pick<ProtocolIdempotencyRecord, 'scope' | 'key' | 'created_at'>;

/** Inserts an in-flight record; false when the key already has one. */
export async function insertInFlight(
  db: Db,
  record: Pick<ProtocolIdempotencyRecord, 'scope' | 'key' | 'request_hash' | 'created_at' | 'expires_at'>,
): Promise<boolean> {
  const inserted = await db('protocol_idempotency')
    .insert({ ...record, state: 'in_flight' })
    .onConflict(['scope', 'key'])
    .ignore()
    .returning('key');
  return inserted.length === 1;
}

export async function findRecord(db: Db, scope: string, key: string): Promise<ProtocolIdempotencyRecord | undefined> {
  return (await db('protocol_idempotency').where({ scope, key }).first()) as ProtocolIdempotencyRecord | undefined;
}

/** Removes exactly the record that was read (same creation time), so two instances cannot remove each other's. */
export async function deleteRecord(db: Db, record: Identity, onlyInFlight = false): Promise<void> {
  await db('protocol_idempotency')
    .where({
      scope: record.scope,
      key: record.key,
      created_at: record.created_at,
      ...(onlyInFlight ? { state: 'in_flight' } : {}),
    })
    .delete();
}

/** Marks this request's record completed with its answer; false when the record is no longer this request's. */
export async function completeRecord(
  db: Db,
  record: Identity,
  response: { status: number; body: string; headers: Record<string, string> },
): Promise<boolean> {
  const updated = await db('protocol_idempotency')
    .where({ scope: record.scope, key: record.key, created_at: record.created_at, state: 'in_flight' })
    .update({
      state: 'completed',
      status_code: response.status,
      response_body: response.body,
      response_headers: JSON.stringify(response.headers),
    });
  return updated === 1;
}
