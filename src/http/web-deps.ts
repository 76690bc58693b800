import type { Deps } from '../deps.js';
import type { Lifecycle, ReadCache } from '../ports.js';
import type { ProfileResolver } from '../services/ucp-profiles.js';
import type { RateLimiter } from './rate-limit.js';

/** What the web layer (handlers, bindings, MCP servers) is built from: the services' parts and its own. */
export interface WebDeps extends Deps {
  /** Requests per address and client per minute; the protocol bindings count their requests through it themselves. */
  rateLimiter: RateLimiter;
  /** Whether the instance is draining before shutdown (readiness fails, connections are closed after each response). */
  lifecycle: Lifecycle;
  /**
   * The one cache of read responses: operations the contract marks `x-cacheable`, 60 s (src/http/caching.ts).
   * A per-process optimisation: nothing depends on it being there or shared.
   */
  readCache: ReadCache;
  /** The one resolver of UCP platform profiles (its cache and fetch budget), for checkouts and order reads alike. */
  profiles: ProfileResolver;
}
