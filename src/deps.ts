import type Stripe from 'stripe';
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import type { Deprecation } from './domain/versioning.js';
import type { ReadCache } from './http/caching.js';
import type { Lifecycle } from './http/draining.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { Logger } from './log.js';
import type { EarlierReads } from './services/earlier-reads.js';

/** What handlers, services and MCP servers are built from. */
export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  /** Milliseconds since the epoch; injectable so expiry can be tested. */
  now: () => number;
  /** Requests per address and client per minute; the protocol bindings count their requests through it themselves. */
  rateLimiter: RateLimiter;
  /** Platform profiles fetched on behalf of one address per minute (UCP_PROFILE_FETCHES_PER_MINUTE). */
  profileFetchLimiter: RateLimiter;
  /** Announced retirements (src/domain/versioning.ts), published at /changelog and in response headers. */
  deprecations: Deprecation[];
  /** Whether the instance is draining before shutdown (readiness fails, connections are closed after each response). */
  lifecycle: Lifecycle;
  /**
   * The one cache of read responses: operations the contract marks `x-cacheable`, 60 s (src/http/caching.ts).
   * A per-process optimisation: nothing depends on it being there or shared.
   */
  readCache: ReadCache;
  /** The last reads of creates and access tokens, to store a like request without reading (services/earlier-reads.ts). */
  earlierReads: EarlierReads;
  /** The Stripe client, when Stripe takes payment (PAYMENTS_MODE). */
  stripe: Stripe | undefined;
}
