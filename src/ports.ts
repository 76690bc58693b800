// The shapes of the process-wide parts that more than one layer holds: the read cache, a counting limiter and the
// instance's lifecycle, and the earlier reads of creates and tokens. Their implementations live in the web layer
// (src/http/caching.ts, rate-limit.ts) and services/earlier-reads.ts;
// the types live here, below every layer, so holding one never imports the web.
import type { LRUCache } from 'lru-cache';
import type { RateLimited } from './domain/errors.js';
import type { NewCartReads } from './db/repositories/catalog.js';

export interface Representation {
  payload: Buffer;
  etag: string;
  contentType: string;
}

/** A representation in the process cache, with the operation that answered it. */
export interface CachedRepresentation extends Representation {
  operationId: string;
  /** When its query started (ms since the epoch): what it shows is at least that old. */
  readAt: number;
}

export type Load = () => Promise<Omit<CachedRepresentation, 'readAt'>>;

/** The process's one cache of read responses, keyed by what the read means (src/http/read-keys.ts). */
export interface ReadCache {
  /** The entry for this read's key, if one was stored in the last 60 s. */
  get(key: string): CachedRepresentation | undefined;
  /** The entry, or what `load` builds (concurrent misses share one load; failures are not kept). */
  fetch(key: string, load: Load): Promise<CachedRepresentation>;
  /**
   * The value stored under `key`, or what `load` gives, under the same 60 s rule and LRU. A key must never be a read's
   * (theirs start `GET `), so a value is never served as a response.
   */
  fetchValue<T>(key: string, load: () => Promise<T>): Promise<T>;
  /** The value fetchValue stored under `key` in the last 60 s, if any: a lookup that never loads. */
  peekValue<T>(key: string): T | undefined;
  /** Forgets every entry (tests that must read what the database holds now). */
  clear(): void;
}

/** A raw request target's read: its operation and the key of what it asks. */
export interface TargetRead {
  operationId: string;
  key: string;
}

/** What a read means, as the read cache is keyed (built from the contract by src/http/read-keys.ts). */
export interface ReadKeys {
  /** The key of a read the contract has validated (the coerced path and query a handler gets); undefined: not keyed. */
  ofInput(
    operationId: string,
    input: { path: Record<string, unknown>; query: Record<string, unknown> },
  ): string | undefined;
  /** The read a raw request target (`req.url`) asks for, when its meaning is certain without the general chain. */
  ofTarget(url: string): TargetRead | undefined;
}

/** What counting a request found: the RateLimit-* headers of the most constrained key, and the 429 if one is over. */
export interface LimitCount {
  headers: Array<[name: string, value: string]>;
  rejection: RateLimited | undefined;
}

/** A budget per key and window, counted without a request in hand (src/http/rate-limit.ts adds the Koa step). */
export interface LimitCounter {
  readonly limit: number;
  /** Counts one request against each key (every key is counted, whether or not one is over its limit). */
  count(...keys: string[]): Promise<LimitCount>;
  /** What the key has used in its window, without counting a request: the headers, and the 429 once it is spent. */
  check(key: string): Promise<LimitCount>;
}

/** Whether the instance is draining before shutdown (readiness fails, connections are closed after each response). */
export interface Lifecycle {
  draining: boolean;
}

/** An access token's grant as read earlier (services/oauth.ts), until when it holds, and the token's hash. */
export interface EarlierGrant {
  grant: { clientId: string; scopes: string[] };
  tokenHash: string;
  expiresAt: number;
}

/** The service's earlier reads: one cache for every session create, one for access tokens. */
export interface EarlierReads {
  /**
   * The last read of each create, REST, agent, MCP, ACP and UCP alike (src/services/checkout/create.ts), by what it
   * read, without its key's record.
   */
  creates: LRUCache<string, NewCartReads>;
  /** The last read of each active access token, by the token's hash. */
  grants: LRUCache<string, EarlierGrant>;
}

/**
 * Calls in progress in this process, by key: a caller of a key whose call is still running shares that call's outcome
 * rather than making it again (src/services/calls-in-progress.ts). Keys name their use (`stripe-checkout …`).
 */
export interface CallsInProgress {
  share<T>(key: string, start: () => Promise<T>): Promise<T>;
}
