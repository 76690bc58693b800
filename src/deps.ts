import type Stripe from 'stripe';
import type { Config } from './config.js';
import type { Db } from './db/knex.js';
import type { IdSource } from './domain/ids.js';
import type { UcpSigningKey } from './domain/order-events.js';
import type { Deprecation } from './domain/versioning.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics.js';
import type { CallsInProgress, EarlierReads, LimitCounter } from './ports.js';
import type { Tracing } from './tracing.js';
import type { ValidatorRegistry } from './validators.js';

/**
 * What services are built from: nothing in it is HTTP. The web layer's own parts (the request rate limiter, the read
 * cache, the lifecycle) are added by src/http/web-deps.ts.
 */
export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  /** Milliseconds since the epoch; injectable so expiry can be tested. */
  now: () => number;
  /** Where new ids come from (src/domain/ids.ts): one per process, holding its pool of random bytes. */
  ids: IdSource;
  /** Platform profiles fetched on behalf of one address per minute (UCP_PROFILE_FETCHES_PER_MINUTE). */
  profileFetchLimiter: LimitCounter;
  /** Announced retirements (src/domain/versioning.ts), published at /changelog and in response headers. */
  deprecations: Deprecation[];
  /** The last reads of creates and access tokens, to store a like request without reading (services/earlier-reads.ts). */
  earlierReads: EarlierReads;
  /** Calls this process is making, shared by concurrent callers of one key (a Stripe Checkout being made). */
  callsInProgress: CallsInProgress;
  /** The Stripe client, when Stripe takes payment (PAYMENTS_MODE). */
  stripe: Stripe | undefined;
  /** The one Ajv setup and its compiled validators (src/validators.ts). */
  validators: ValidatorRegistry;
  /** Where the process's metrics are recorded, when they are kept (METRICS_PORT; src/metrics.ts). */
  metrics: Metrics | undefined;
  /** The UCP signing key derived from AGENT_WEBHOOK_KEY (services/order-events.ts ucpSigningKeyOf), or undefined. */
  ucpSigningKey: UcpSigningKey | undefined;
  /** The tracer, when an OTLP endpoint is set (src/tracing.ts); undefined: nothing is traced. */
  tracing: Tracing | undefined;
}
