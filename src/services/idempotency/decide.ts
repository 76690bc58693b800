// What a key's record answers a request, whatever surface stored it: the one decision and the one staleness rule.
// Pure functions of the record, the request's fingerprint and the time.

/**
 * Backstop for in-flight records that were never given a lease (their expiry is the retention). No surface writes
 * in-flight records any more (a key is claimed by the statement that stores its answer, so a crash leaves the key
 * free); an earlier release's are taken over after this.
 */
export const ABANDONED_AFTER_MS = 60 * 1000;

/** What the decision reads of a key's record (both tables have these columns; timestamps as JSON gives them). */
export interface KeyRecordState {
  request_hash: string;
  /** `in_flight` records are written by earlier releases only, which claimed the key before the work. */
  state: 'in_flight' | 'completed';
  created_at: string;
  expires_at: string;
}

/**
 * `fresh`: the key is free (no record, or a stale one created at `replaces`, which the answer takes over): do the
 * work and store its answer. `replay`: the record holds this request's answer. `conflict`: the key was used with
 * another request. `in_flight`: an earlier release's request still holds the key.
 */
export type Decision<Record extends KeyRecordState = KeyRecordState> =
  | { kind: 'fresh'; replaces: string | null }
  | { kind: 'replay'; record: Record }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

/** Whether a request may take the key over from its record: expired, or in flight for ABANDONED_AFTER_MS. */
export function isStale(record: Pick<KeyRecordState, 'state' | 'created_at' | 'expires_at'>, now: number): boolean {
  if (new Date(record.expires_at).getTime() <= now) return true;
  return record.state === 'in_flight' && new Date(record.created_at).getTime() + ABANDONED_AFTER_MS <= now;
}

/** How a request with fingerprint `hash` is answered, given its key's record as read (undefined: none). */
export function decide<Record extends KeyRecordState>(
  record: Record | undefined,
  hash: string,
  now: number,
): Decision<Record> {
  if (!record) return { kind: 'fresh', replaces: null };
  if (isStale(record, now)) return { kind: 'fresh', replaces: record.created_at };
  if (record.request_hash !== hash) return { kind: 'conflict' };
  if (record.state === 'in_flight') return { kind: 'in_flight' };
  return { kind: 'replay', record };
}
