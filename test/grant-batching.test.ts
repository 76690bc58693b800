// Bearer tokens are read by statement batching (src/db/batching.ts): the token lookups of concurrent requests share one
// statement, and nothing is cached. Requests carrying every kind of token (valid, revoked, expired, unknown, without
// the scope asked for), on the agent surface and on ACP, are answered each as it is answered alone; a revocation on
// one instance is refused by the very next request on the other; a token statement the database cancelled fails each
// of its members as it fails a lone request (503); inside a transaction a lookup stays a statement of its own.
// Statements are held behind a table lock so that requests pile up deterministically.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findToken, TOKEN_READ, type TokenRow } from '../src/db/repositories/oauth.js';
import { hashSecret } from '../src/domain/auth.js';
import { bearer, registerClient, requestToken, revokeToken } from './support/agent.js';
import { createTestDatabase, serverUrl, type TestDatabase } from './support/database.js';
import { PROTOCOL_ENV, protocolFetch } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';
import { cancelLockWaitersUntil, holdTable, pause, statementsSent } from './support/statements.js';

type TokenKind = 'valid' | 'catalogOnly' | 'cartOnly' | 'revoked' | 'expired' | 'unknown';

/** A token of each kind, issued (and revoked or expired) through `api`; each from its own client. */
async function tokensOfEveryKind(api: TestService): Promise<Record<TokenKind, string>> {
  const tokenOf = async (scope: string) => requestToken(api, await registerClient(api, { scope }));
  const [valid, catalogOnly, cartOnly, expired] = await Promise.all(
    ['catalog:read cart:write', 'catalog:read', 'cart:write', 'catalog:read cart:write'].map(tokenOf),
  );
  const revoker = await registerClient(api, { scope: 'catalog:read cart:write' });
  const revoked = await requestToken(api, revoker);
  await revokeToken(api, revoker, revoked);
  await api.service.deps
    .db('oauth_tokens')
    .where({ token_hash: hashSecret(expired!) })
    .update({ expires_at: new Date(Date.now() - 1_000) });
  return {
    valid: valid!,
    catalogOnly: catalogOnly!,
    cartOnly: cartOnly!,
    revoked,
    expired: expired!,
    unknown: `sfat_${randomBytes(32).toString('base64url')}`,
  };
}

interface Call {
  surface: 'agent' | 'acp';
  token: string;
}

/** Every kind of token on both surfaces that check it: /agent (catalog:read) and ACP (cart:write). */
const callsOf = (tokens: Record<TokenKind, string>): Call[] =>
  (['agent', 'acp'] as const).flatMap((surface) => Object.values(tokens).map((token) => ({ surface, token })));

/** The answer to a call, without what two identical calls are given differently (the request id). */
async function send(api: TestService, { surface, token }: Call) {
  const { response, body } =
    surface === 'agent'
      ? await protocolFetch(api, '/agent/products?limit=1', { headers: bearer(token) })
      : await protocolFetch(api, '/acp/checkout_sessions/cs_never_created', {
          headers: { ...bearer(token), 'API-Version': '2026-04-17' },
        });
  const { request_id: _requestId, ...rest } = (body ?? {}) as Record<string, unknown>;
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: rest };
}

describe('token reads on either storage', () => {
  let api: TestService;
  let tokens: Record<TokenKind, string>;
  beforeAll(async () => {
    api = await startTestService({ env: PROTOCOL_ENV });
    tokens = await tokensOfEveryKind(api);
  });
  afterAll(async () => {
    await api?.close();
  });

  it('reads the tokens of lookups made at once in one statement, each as it is read alone', async () => {
    const db = api.service.deps.db;
    const hashes = [...Object.values(tokens), tokens.valid].map(hashSecret);
    const alone = [];
    for (const hash of hashes) alone.push(await findToken(db, hash));
    expect(alone.map((token) => token?.client_id === undefined)).toEqual([
      false,
      false,
      false,
      false,
      false,
      true,
      false,
    ]);

    const sent = statementsSent([api], TOKEN_READ);
    const atOnce = await Promise.all(hashes.map((hash) => findToken(db, hash)));
    sent.stop();
    expect(atOnce).toEqual(alone);
    expect(sent.sent).toBe(1);
  });

  it('answers concurrent requests with every kind of token each as it answers them alone', async () => {
    const calls = callsOf(tokens);
    const alone = [];
    for (const call of calls) alone.push(await send(api, call));
    expect(alone.map((answer) => answer.status)).toEqual([200, 200, 403, 401, 401, 401, 404, 403, 404, 401, 401, 401]);
    const answers = await Promise.all([...calls, ...calls].map((call) => send(api, call)));
    expect(answers).toEqual([...alone, ...alone]);
  });

  it('looks tokens up inside a transaction on its connection, each lookup a statement of its own', async () => {
    const db = api.service.deps.db;
    const mine = hashSecret('sfat_only_in_this_transaction');
    const hashes = [mine, hashSecret(tokens.valid), hashSecret(tokens.unknown)];
    const sent = statementsSent([api], TOKEN_READ);
    let found: Array<TokenRow | undefined> = [];
    let clientId = '';
    await expect(
      db.transaction(async (trx) => {
        clientId = (await findToken(trx, hashSecret(tokens.valid)))!.client_id;
        const now = new Date();
        const expires = new Date(now.getTime() + 60_000);
        await trx('oauth_tokens').insert({
          token_hash: mine,
          client_id: clientId,
          scope: 'catalog:read',
          issued_at: now,
          expires_at: expires,
        });
        found = await Promise.all(hashes.map((hash) => findToken(trx, hash)));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    sent.stop();
    // Its own uncommitted token is seen: the lookups ran on the transaction's connection, one statement each.
    expect(found.map((token) => token?.client_id)).toEqual([clientId, clientId, undefined]);
    expect(sent.sent).toBe(1 + hashes.length);
    expect(await findToken(db, mine)).toBeUndefined();
  });
});

describe.skipIf(!serverUrl)('token reads over two instances on one PostgreSQL', () => {
  let database: TestDatabase;
  let one: TestService;
  let two: TestService;
  let instances: TestService[];
  let tokens: Record<TokenKind, string>;

  beforeAll(async () => {
    database = await createTestDatabase();
    one = await startTestService({ database, env: PROTOCOL_ENV });
    two = await startTestService({ database, env: PROTOCOL_ENV });
    instances = [one, two];
    tokens = await tokensOfEveryKind(one);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await database?.drop();
  });

  /** Holds every statement on oauth_tokens until `release`. */
  const holdTokens = () => holdTable(database, 'oauth_tokens', 'access exclusive');

  it('answers requests with every kind of token, sent at once to both instances, each as alone, in one statement per instance', async () => {
    const calls = [...callsOf(tokens), ...callsOf(tokens)];
    const alone = [];
    for (const [index, call] of calls.entries()) alone.push(await send(instances[index % 2]!, call));

    const sent = statementsSent(instances, TOKEN_READ);
    const held = await holdTokens();
    // The first lookup on each instance waits behind the lock; the others queue for the next statement meanwhile.
    const fillers = Promise.all(instances.map((api) => send(api, { surface: 'agent', token: tokens.valid })));
    await sent.reach(instances.length);
    const pending = Promise.all(calls.map((call, index) => send(instances[index % 2]!, call)));
    await pause(300);
    await held.release();
    const [filled, answers] = await Promise.all([fillers, pending]);
    sent.stop();

    expect(filled.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers).toEqual(alone);
    expect(sent.sent).toBe(instances.length * 2);
  });

  it('refuses a token revoked on one instance at the very next request on the other', async () => {
    const client = await registerClient(one, { scope: 'catalog:read cart:write' });
    const token = await requestToken(one, client);
    const calls: Call[] = [
      { surface: 'agent', token },
      { surface: 'acp', token },
    ];
    for (const api of instances) for (const call of calls) expect((await send(api, call)).status).not.toBe(401);
    await revokeToken(two, client, token);
    for (const api of [one, two]) for (const call of calls) expect((await send(api, call)).status).toBe(401);
  });

  it('answers every member of a token statement the database cancelled as it answers a lone request: 503', async () => {
    const held = await holdTokens();
    const sent = statementsSent([one], TOKEN_READ);
    const count = 12;
    const pending = Promise.all(
      Array.from({ length: count }, (_, index) =>
        send(one, { surface: index % 2 ? 'acp' : 'agent', token: index % 3 ? tokens.valid : tokens.revoked }),
      ),
    );
    await sent.reach(1);
    await pause(300);
    // Each statement waiting behind the lock is cancelled (the lone lookup's, then the batch's that queued meanwhile).
    const answers = await cancelLockWaitersUntil(database, pending);
    await held.release();
    sent.stop();

    expect(sent.sent).toBeLessThan(count);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    // Each surface's own unavailable answer: the agent API's OAuth shape, ACP's flat error.
    expect(answers.map((answer) => answer.body.error ?? answer.body.code)).toEqual(
      answers.map((_, index) => (index % 2 ? 'service_unavailable' : 'temporarily_unavailable')),
    );
  });
});
