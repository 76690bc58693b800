// The idempotency module's pure parts, one table each: what a key's record answers (decide, isStale), each surface's
// policy (fingerprint, retention, scope, what is stored), and the claim-with-write strategy's decisions over a store
// that is a function. Stored keys must keep matching, so fingerprints are checked against hashes of literal texts.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { IdempotencyRecord } from '../../src/db/repositories/idempotency.js';
import type { Deps } from '../../src/deps.js';
import { NotSettled } from '../../src/domain/errors.js';
import {
  ABANDONED_AFTER_MS,
  MAX_SETTLE_ATTEMPTS,
  checkoutKeys,
  claimWithWrite,
  decide,
  isStale,
  jcsHash,
  protocolKeys,
  RawBody,
  sortedKeysHash,
  storedScope,
  untilSettled,
  type KeyClaim,
  type KeyRecordState,
} from '../../src/services/idempotency/index.js';

const NOW = Date.parse('2026-01-10T12:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const HOUR = 60 * 60 * 1000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function record(overrides: Partial<KeyRecordState> = {}): KeyRecordState {
  return {
    request_hash: 'hash-a',
    state: 'completed',
    created_at: at(-HOUR),
    expires_at: at(HOUR),
    ...overrides,
  };
}

describe('isStale', () => {
  const cases: Array<[string, KeyRecordState, boolean]> = [
    ['a completed record before its expiry', record(), false],
    ['a completed record at its expiry', record({ expires_at: at(0) }), true],
    ['a completed record past its expiry', record({ expires_at: at(-1) }), true],
    ['a completed record created long ago, not expired', record({ created_at: at(-10 * HOUR) }), false],
    ['an in-flight record younger than the backstop', record({ state: 'in_flight', created_at: at(-1_000) }), false],
    [
      'an in-flight record one millisecond short of the backstop',
      record({ state: 'in_flight', created_at: at(-ABANDONED_AFTER_MS + 1) }),
      false,
    ],
    [
      'an in-flight record exactly at the backstop',
      record({ state: 'in_flight', created_at: at(-ABANDONED_AFTER_MS) }),
      true,
    ],
    ['an in-flight record past its expiry', record({ state: 'in_flight', created_at: at(0), expires_at: at(0) }), true],
  ];
  it.each(cases)('%s: %s', (_name, stored, stale) => {
    expect(isStale(stored, NOW)).toBe(stale);
  });

  it('takes an abandoned in-flight record over after one minute', () => {
    expect(ABANDONED_AFTER_MS).toBe(60_000);
  });
});

describe('decide', () => {
  const cases: Array<
    [string, KeyRecordState | undefined, string, ReturnType<typeof decide>['kind'], (string | null)?]
  > = [
    ['no record', undefined, 'hash-a', 'fresh', null],
    ['an expired record, same request', record({ expires_at: at(-1) }), 'hash-a', 'fresh', at(-HOUR)],
    ['an expired record, another request', record({ expires_at: at(-1) }), 'hash-b', 'fresh', at(-HOUR)],
    [
      'an abandoned in-flight record',
      record({ state: 'in_flight', created_at: at(-ABANDONED_AFTER_MS) }),
      'hash-b',
      'fresh',
      at(-ABANDONED_AFTER_MS),
    ],
    ['a completed record, same request', record(), 'hash-a', 'replay'],
    ['a completed record, another request', record(), 'hash-b', 'conflict'],
    [
      'an in-flight record, same request',
      record({ state: 'in_flight', created_at: at(-1_000) }),
      'hash-a',
      'in_flight',
    ],
    // Another request is a conflict even while the key is in flight: nothing it could wait for would answer it.
    [
      'an in-flight record, another request',
      record({ state: 'in_flight', created_at: at(-1_000) }),
      'hash-b',
      'conflict',
    ],
  ];
  it.each(cases)('%s: %s', (_name, stored, hash, kind, replaces) => {
    const decided = decide(stored, hash, NOW);
    expect(decided.kind).toBe(kind);
    if (decided.kind === 'fresh') expect(decided.replaces).toBe(replaces);
    if (decided.kind === 'replay') expect(decided.record).toBe(stored);
  });
});

describe('fingerprints', () => {
  // [body, the canonical text the checkout keys hash, the canonical text the protocol keys hash]
  const cases: Array<[string, unknown, string, string]> = [
    ['an absent body', undefined, 'null', '{}'],
    ['a null body', null, 'null', '{}'],
    ['an empty object', {}, '{}', '{}'],
    [
      'keys out of order, nested',
      { b: 1, a: [2, { d: 1, c: 'x' }] },
      '{"a":[2,{"c":"x","d":1}],"b":1}',
      '{"a":[2,{"c":"x","d":1}],"b":1}',
    ],
    ['a number written 1.0', JSON.parse('{"quantity":1.0}'), '{"quantity":1}', '{"quantity":1}'],
    ['array order kept', { items: [2, 1] }, '{"items":[2,1]}', '{"items":[2,1]}'],
    ['null kept apart from absent', { buyer: null }, '{"buyer":null}', '{"buyer":null}'],
    ['keys sorted by code unit', { é: 1, z: 2, A: 3 }, '{"A":3,"z":2,"é":1}', '{"A":3,"z":2,"é":1}'],
  ];
  it.each(cases)('%s', (_name, body, checkoutText, protocolText) => {
    expect(sortedKeysHash(body)).toBe(sha256(checkoutText));
    expect(checkoutKeys.fingerprint(body)).toBe(sha256(checkoutText));
    expect(jcsHash(body)).toBe(sha256(protocolText));
    expect(protocolKeys.fingerprint(body)).toBe(sha256(protocolText));
  });

  it('tells another body apart', () => {
    expect(checkoutKeys.fingerprint({ a: 1 })).not.toBe(checkoutKeys.fingerprint({ a: 2 }));
    expect(protocolKeys.fingerprint({ a: 1 })).not.toBe(protocolKeys.fingerprint({ a: 2 }));
  });

  it('fingerprints a raw body (UCP 2026-08-25) by its exact bytes: the same JSON in other bytes differs', () => {
    const bytes = Buffer.from('{"b":1, "a":1.0}');
    expect(protocolKeys.fingerprint(new RawBody(bytes))).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(protocolKeys.fingerprint(new RawBody(Buffer.from('{"a":1,"b":1}')))).not.toBe(
      protocolKeys.fingerprint(new RawBody(bytes)),
    );
    expect(protocolKeys.fingerprint(new RawBody(Buffer.alloc(0)))).toBe(sha256(''));
  });
});

describe('policies', () => {
  const retention = { idempotencyMs: 7 * HOUR } as Deps['config']['retention'];

  /** The retention a policy gives under a configuration of 7 hours. */
  const retainedBy = (policy: { retentionMs(configured: typeof retention): number }) => policy.retentionMs(retention);
  it.each([
    ['checkout keys: the configured retention', checkoutKeys, 7 * HOUR],
    ['protocol keys: 48 hours, whatever is configured', protocolKeys, 48 * HOUR],
  ])('%s', (_name, policy, expected) => {
    expect(retainedBy(policy)).toBe(expected);
  });

  it.each([
    ['REST and MCP checkout', checkoutKeys.scope, 'createCheckoutSession'],
    [
      'ACP',
      protocolKeys.scope.acp('client_1', '/acp/checkout_sessions/cs_1'),
      'acp|client_1|POST /acp/checkout_sessions/cs_1',
    ],
    [
      'UCP',
      protocolKeys.scope.ucp('https://platform.example/profile', 'PUT', '/ucp/checkout-sessions/cart_1'),
      'ucp|https://platform.example/profile|PUT /ucp/checkout-sessions/cart_1',
    ],
    [
      'UCP over MCP, with a session',
      protocolKeys.scope.ucpMcp('https://platform.example/profile', 'complete_checkout', 'cart_1'),
      'ucp-mcp|https://platform.example/profile|complete_checkout cart_1',
    ],
    [
      'UCP over MCP, a create',
      protocolKeys.scope.ucpMcp('https://platform.example/profile', 'create_checkout', undefined),
      'ucp-mcp|https://platform.example/profile|create_checkout ',
    ],
  ])('scopes %s keys as earlier releases stored them', (_name, scope, expected) => {
    expect(scope).toBe(expected);
  });

  it.each([
    ['a short scope, as it is', 'ucp|https://p.example/|POST /ucp/checkout-sessions', (scope: string) => scope],
    ['a scope of 2,048 bytes, as it is', `ucp|${'é'.repeat(1022)}`, (scope: string) => scope],
    [
      'a scope past 2,048 bytes, as its SHA-256',
      `ucp|${'é'.repeat(1023)}`,
      (scope: string) => `sha256:${sha256(scope)}`,
    ],
  ])('stores %s', (_name, scope, expected) => {
    expect(storedScope(scope)).toBe(expected(scope));
    expect(protocolKeys.storedScope(scope)).toBe(expected(scope));
  });

  it('stores checkout scopes as they are, whatever their length', () => {
    const long = 'x'.repeat(5_000);
    expect(checkoutKeys.storedScope(long)).toBe(long);
  });

  const claim: KeyClaim = {
    scope: 's',
    key: 'k',
    requestHash: 'h',
    createdAt: new Date(NOW),
    expiresAt: new Date(NOW + HOUR),
    replaces: null,
  };

  it('checkout keys store JSON and the API version, and replay them', () => {
    const answer = { body: { id: 'cart_1' }, apiVersion: '2026-01-01' };
    expect(checkoutKeys.toStore(claim, answer)).toEqual({ ...claim, status: 201, ...answer });
    expect((checkoutKeys as { keeps(kept: typeof answer): boolean }).keeps(answer)).toBe(true);
    const stored = {
      ...record(),
      status_code: 201,
      response_body: { id: 'cart_1' },
      api_version: '2026-01-01',
    } as IdempotencyRecord;
    expect(checkoutKeys.replayOf(stored)).toEqual(answer);
  });

  it('protocol keys store exact bytes and headers, and replay them; 5xx answers are not kept', () => {
    const response = { status: 201, body: '{"id": "cart_1"}', headers: { 'Content-Language': 'en' } };
    expect(protocolKeys.toStore(claim, response)).toEqual({ ...claim, response });
    const stored = {
      ...record(),
      status_code: 201,
      response_body: response.body,
      response_headers: response.headers,
    };
    expect(protocolKeys.replayOf(stored)).toEqual(response);
    expect(protocolKeys.replayOf({ ...stored, response_headers: null })).toEqual({ ...response, headers: {} });
    expect.soft(protocolKeys.keeps({ ...response, status: 499 })).toBe(true);
    expect.soft(protocolKeys.keeps({ ...response, status: 500 })).toBe(false);
    expect.soft(protocolKeys.keeps({ ...response, status: 503 })).toBe(false);
  });
});

describe('untilSettled', () => {
  it.each([1, 3, MAX_SETTLE_ATTEMPTS])('answers the first settled attempt (attempt %i)', async (settlesAt) => {
    let attempts = 0;
    const result = await untilSettled(async () => (++attempts === settlesAt ? 'answer' : undefined));
    expect(result).toBe('answer');
    expect(attempts).toBe(settlesAt);
  });

  it(`gives up after ${MAX_SETTLE_ATTEMPTS} unsettled attempts`, async () => {
    let attempts = 0;
    await expect(untilSettled(async () => void attempts++)).rejects.toBeInstanceOf(NotSettled);
    expect(attempts).toBe(MAX_SETTLE_ATTEMPTS);
  });
});

describe('claim with write', () => {
  const deps = { now: () => NOW, config: { retention: { idempotencyMs: 24 * HOUR } } } as unknown as Deps;
  const request = { scope: checkoutKeys.scope, key: 'key-1', body: { a: 1 } };
  const hash = sortedKeysHash({ a: 1 });
  const answer = { body: { id: 'cart_new' }, apiVersion: 'v2' };
  const completed = (requestHash: string, overrides: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
    request_hash: requestHash,
    state: 'completed',
    status_code: 201,
    response_body: { id: 'cart_old' },
    api_version: 'v1',
    created_at: at(-HOUR),
    expires_at: at(HOUR),
    ...overrides,
  });

  /** Runs a create whose read finds `read` and whose store answers `stores` in turn; what it stored and answered. */
  async function run(read: IdempotencyRecord | undefined, stores: Array<'stored' | IdempotencyRecord | undefined>) {
    const stored: unknown[] = [];
    let reads = 0;
    const outcome = await claimWithWrite(deps, checkoutKeys, request, {
      earlier: undefined,
      read: async () => ({ reads: reads++, record: read }),
      answer: () => ({
        answer,
        store: async (toStore) => {
          stored.push(toStore);
          const next = stores.shift();
          return next === 'stored' ? { stored: true } : { stored: false, keyRecord: next };
        },
      }),
    });
    return { outcome, stored, reads };
  }

  it.each([
    ['a free key runs and stores', undefined, ['stored'], { kind: 'ran', answer }, 1],
    [
      'the same request replays',
      completed(hash),
      [],
      { kind: 'replayed', answer: { body: { id: 'cart_old' }, apiVersion: 'v1' } },
      0,
    ],
    ['another request conflicts', completed('other'), [], { kind: 'conflict' }, 0],
    [
      'an in-flight record answers in flight',
      completed(hash, { state: 'in_flight', created_at: at(-1_000) }),
      [],
      { kind: 'in_flight' },
      0,
    ],
    [
      'a stale record is taken over',
      completed('other', { expires_at: at(-1) }),
      ['stored'],
      { kind: 'ran', answer },
      1,
    ],
    [
      'an answer stored meanwhile is replayed from the record the store saw',
      undefined,
      [completed(hash)],
      { kind: 'replayed', answer: { body: { id: 'cart_old' }, apiVersion: 'v1' } },
      1,
    ],
    ['another answer stored meanwhile conflicts', undefined, [completed('other')], { kind: 'conflict' }, 1],
    ['a store that saw no record reads again', undefined, [undefined, 'stored'], { kind: 'ran', answer }, 2],
  ] as const)('%s', async (_name, read, stores, expected, storeCount) => {
    const { outcome, stored } = await run(read, [...stores]);
    expect(outcome).toEqual(expected);
    expect(stored).toHaveLength(storeCount);
  });

  it('stores the claim with the fingerprint, the retention and the stale record it replaces', async () => {
    const stale = completed('other', { expires_at: at(-1) });
    const { stored } = await run(stale, ['stored']);
    expect(stored[0]).toEqual({
      scope: 'createCheckoutSession',
      key: 'key-1',
      requestHash: hash,
      createdAt: new Date(NOW),
      expiresAt: new Date(NOW + 24 * HOUR),
      replaces: stale.created_at,
      status: 201,
      ...answer,
    });
  });
});
