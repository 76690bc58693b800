// Idempotency-Key records. The (scope, key) primary key decides, across every instance, which request runs.
import type { Knex } from 'knex';
import { asPrepared, type Db } from '../knex.js';

export interface IdempotencyRecord {
  scope: string;
  key: string;
  request_hash: string;
  state: 'in_flight' | 'completed';
  status_code: number | null;
  response_body: unknown;
  api_version: string | null;
  created_at: Date;
  expires_at: Date;
}

/** Inserts an in-flight record; false when the key already has one. */
export async function insertInFlight(
  db: Db,
  record: Pick<IdempotencyRecord, 'scope' | 'key' | 'request_hash' | 'created_at' | 'expires_at'>,
): Promise<boolean> {
  const inserted = await asPrepared(
    'insert_idempotency_key',
    db('idempotency_keys')
      .insert({ ...record, state: 'in_flight' })
      .onConflict(['scope', 'key'])
      .ignore()
      .returning('key'),
  );
  return inserted.length === 1;
}

export async function findRecord(db: Db, scope: string, key: string): Promise<IdempotencyRecord | undefined> {
  return (await db('idempotency_keys').where({ scope, key }).first()) as IdempotencyRecord | undefined;
}

/** Removes exactly the record that was read (same creation time), so two instances cannot remove each other's. */
export async function deleteRecord(
  db: Db,
  record: Pick<IdempotencyRecord, 'scope' | 'key' | 'created_at'>,
): Promise<void> {
  await db('idempotency_keys').where({ scope: record.scope, key: record.key, created_at: record.created_at }).delete();
}

/** Removes an in-flight record, only the one created at that time. */
export async function deleteInFlightRecord(
  db: Db,
  record: Pick<IdempotencyRecord, 'scope' | 'key' | 'created_at'>,
): Promise<void> {
  await db('idempotency_keys')
    .where({ scope: record.scope, key: record.key, created_at: record.created_at, state: 'in_flight' })
    .delete();
}

/** Extends the lease of an in-flight record, only the one created at that time (a completed record is left alone). */
export async function renewInFlightRecord(
  db: Db,
  record: Pick<IdempotencyRecord, 'scope' | 'key' | 'created_at'>,
  expiresAt: Date,
): Promise<void> {
  await db('idempotency_keys')
    .where({ scope: record.scope, key: record.key, created_at: record.created_at, state: 'in_flight' })
    .update({ expires_at: expiresAt });
}

/** A key's answer, stored with the write it describes: the in-flight record becomes completed, kept until `expiresAt`. */
export interface KeyAnswer {
  scope: string;
  key: string;
  status: number;
  body: unknown;
  apiVersion: string;
  expiresAt: Date;
}

/** Completes the key's in-flight record with its answer (a CTE of the repositories' combined writes). */
export const COMPLETE_RECORD = `update idempotency_keys
  set state = 'completed', status_code = ?, response_body = ?::jsonb, api_version = ?, expires_at = ?
  where scope = ? and key = ? and state = 'in_flight'`;

/** The bindings of COMPLETE_RECORD, in its order. */
export function completeRecordBindings(answer: KeyAnswer): Knex.RawBinding[] {
  return [answer.status, JSON.stringify(answer.body), answer.apiVersion, answer.expiresAt, answer.scope, answer.key];
}
