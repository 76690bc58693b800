// OAuth clients and access tokens, looked up by id or by the hash of the token (never by the token itself).
import type { Db } from '../knex.js';

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

export async function findToken(db: Db, tokenHash: string): Promise<TokenRow | undefined> {
  return db<TokenRow>('oauth_tokens').where({ token_hash: tokenHash }).first();
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
