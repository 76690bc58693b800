// OAuth clients and access tokens, looked up by id or by the hash of the token (never by the token itself).
import { readByKey, type Db } from '../knex.js';

export interface ClientRow {
  id: string;
  secret_hash: string;
  name: string | null;
  scope: string;
  /** Where the client's order events go (see services/order-webhooks.ts). */
  webhook_url: string | null;
  created_at: Date;
}

export interface TokenRow {
  token_hash: string;
  client_id: string;
  scope: string;
  issued_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export async function insertClient(db: Db, client: ClientRow): Promise<void> {
  await db('oauth_clients').insert(client);
}

export async function findClient(db: Db, id: string): Promise<ClientRow | undefined> {
  return db<ClientRow>('oauth_clients').where({ id }).first();
}

export async function insertToken(db: Db, token: Omit<TokenRow, 'revoked_at'>): Promise<void> {
  await db('oauth_tokens').insert(token);
}

/**
 * The tokens whose hashes $1 holds. The text is fixed whatever the batch holds, and the array is read through a
 * sub-select, as SESSION_READ reads its ids, so that PostgreSQL keeps one generic plan instead of planning each
 * execution anew. Exported so that tests can count the statements sent.
 */
export const TOKEN_READ = `select token_hash, client_id, scope, issued_at, expires_at, revoked_at
from oauth_tokens where token_hash = any((select $1::text[])::text[])`;

/**
 * Whether the token whose hash is `tokenHash` (an SQL expression; null: no token to confirm) is still active at `at`
 * (unrevoked and unexpired, as tokenState has it), evaluated by the statement that relies on it: nothing committed
 * before that statement, a revocation included, is missed.
 */
export const stillActiveToken = (tokenHash: string, at: string) =>
  `(${tokenHash} is null or exists (select from oauth_tokens
    where token_hash = ${tokenHash} and revoked_at is null and expires_at > ${at}))`;

/**
 * Token reads outside a transaction are batched per database as create reads are (see src/db/batching.ts): a lone
 * read goes at once; while a token statement runs, further reads queue, and the next statement reads them all (at
 * most 32). A bearer request so costs a share of one round trip instead of a round trip of its own.
 */
const readToken = readByKey<TokenRow>({
  name: 'token_read',
  sql: TOKEN_READ,
  keyOf: (row) => row.token_hash,
  maxBatch: 32,
  maxInFlight: 1,
});

/**
 * The token with this hash, read afresh (nothing is cached, so a revocation is seen by the very next read): inside a
 * transaction on the transaction's connection, otherwise in a statement that may read other requests' tokens too
 * (always one that starts after this call, so it sees every write committed before).
 */
export async function findToken(db: Db, tokenHash: string): Promise<TokenRow | undefined> {
  return readToken(db, tokenHash);
}

/** Revokes the token only if this client was issued it; a token of another client is left untouched. */
export async function revokeToken(db: Db, tokenHash: string, clientId: string, at: Date): Promise<void> {
  await db('oauth_tokens')
    .where({ token_hash: tokenHash, client_id: clientId })
    .whereNull('revoked_at')
    .update({ revoked_at: at });
}

/** Housekeeping at each grant: the client's expired and revoked tokens can never be valid again. */
export async function deleteSpentTokens(db: Db, clientId: string, now: Date): Promise<void> {
  await db('oauth_tokens')
    .where({ client_id: clientId })
    .andWhere((spent) => spent.where('expires_at', '<=', now).orWhereNotNull('revoked_at'))
    .delete();
}
