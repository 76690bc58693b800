// Builds and runs the whole service in one process: database, contract, HTTP server; and stops it cleanly.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { createDatabase, prepareDatabase, type Db } from './db/knex.js';
import { readStatusCounts } from './db/repositories/status-counts.js';
import type { PoolCounts } from './metrics.js';
import { Store } from './db/store.js';
import { createHandlers } from './handlers/index.js';
import { loadDocument } from './document.js';
import { createContract } from './http/openapi.js';
import { agentAuthentication } from './http/agent-auth.js';
import { cacheableOperations, cacheRepresentations, createReadCache } from './http/caching.js';
import type { Deps } from './deps.js';
import { createRateLimiter } from './http/rate-limit.js';
import type { WebDeps } from './http/web-deps.js';
import { createMcpServers } from './mcp/index.js';
import { protocolBindings } from './http/protocols.js';
import { profileResolverOf } from './http/ucp.js';
import { readKeys } from './http/read-keys.js';
import type { ReadKeys } from './ports.js';
import { createRequestListener } from './http/server.js';
import { checkNoticePeriods, DEPRECATIONS, type Deprecation } from './domain/versioning.js';
import { correlateLogs, createLogger, type Logger } from './log.js';
import { tracingEnabled, type Tracing } from './tracing.js';
import { createEarlierReads } from './services/earlier-reads.js';
import { createCallsInProgress } from './services/calls-in-progress.js';
import { startRetentionSweeps } from './services/retention.js';
import { startWebhookDelivery } from './services/order-webhooks.js';
import { createStripeClient } from './services/payments/stripe.js';
import { protocolValidators } from './protocols/schemas.js';
import { IdSource } from './domain/ids.js';
import { ucpSigningKeyOf } from './services/order-events.js';

export interface Service {
  deps: WebDeps;
  server: Server;
  /** The address the server listens on, e.g. http://127.0.0.1:3000. */
  url: string;
  /** Where Prometheus scrapes, e.g. http://127.0.0.1:9464/metrics, when METRICS_PORT is set. */
  metricsUrl: string | undefined;
  /**
   * Stops the service: with `drainMs`, first drains that long (readiness 503, `Connection: close`, still answering);
   * then closes the listener, lets in-flight requests finish, and releases the pool and Redis.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

export interface ServiceOptions {
  now?: () => number;
  log?: Logger;
  /** Extra retirements to announce, on top of those in src/domain/versioning.ts (tests use this). */
  deprecations?: Deprecation[];
}

/** Each Redis command a span, child of the active one (a request's), when tracing is on. */
function traceCommands(redis: Redis, tracing: Tracing): void {
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = (command, ...rest) => {
    const operation = command.name.toUpperCase();
    const span = tracing.startSpan(operation, {
      kind: 'client',
      attributes: { 'db.system.name': 'redis', 'db.operation.name': operation },
    });
    if (span)
      command.promise.then(
        () => span.end(),
        (error: unknown) => span.end(error),
      );
    return send(command, ...rest);
  };
}

/** The tracer the `OTEL_*` variables describe, or undefined (no SDK loaded) when they name no endpoint. */
async function startTracing(otel: Config['otel']): Promise<Tracing | undefined> {
  if (!tracingEnabled(otel)) return undefined;
  const { createTracing } = await import('./tracing-sdk.js');
  return createTracing(otel);
}

async function connectRedis(config: Config, log: Logger, tracing: Tracing | undefined): Promise<Redis> {
  // Loaded only when REDIS_URL is set: the client costs a tenth of a second and ~10 MB to load, which a start without
  // Redis (the embedded default) would pay for nothing.
  const { Redis } = await import('ioredis');
  // No offline queue and a command timeout: a Redis that is down or stalls fails the command at once or within the
  // timeout, and the limiter counts the request in memory instead of holding it.
  const redis = new Redis(config.redisUrl!, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: config.redisCommandTimeoutMs,
    lazyConnect: false,
  });
  if (tracing) traceCommands(redis, tracing);
  let reported = false;
  redis.on('error', (error) => {
    if (!reported) log.warn({ err: error }, 'Redis unreachable; rate limits fall back to in-memory counting');
    reported = true;
  });
  redis.on('ready', () => {
    if (reported) log.info('Redis reachable again; rate limits are shared');
    reported = false;
  });
  return redis;
}

/** How long a scrape waits for the database's counts (orders and sessions by status, the outbox). */
const SCRAPE_QUERY_TIMEOUT_MS = 1_000;

/** The connection pool's counts (tarn, under Knex): PostgreSQL's pool, and the one connection PGlite's client pools. */
function poolCounts(db: Db): PoolCounts | undefined {
  const pool = (db.client as { pool?: TarnPool }).pool;
  if (!pool) return undefined;
  return {
    used: pool.numUsed(),
    idle: pool.numFree(),
    waiting: pool.numPendingAcquires(),
    max: pool.max,
  };
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  max: number;
}

/** How long start-up waits for Redis: long enough for a reachable Redis to answer, short enough not to hold up a start. */
const REDIS_START_WAIT_MS = 3_000;

/**
 * Waits until Redis is ready, or has failed once, or REDIS_START_WAIT_MS has passed: an instance that serves before its
 * first connection is up would count its first requests in memory, apart from the other instances.
 */
async function redisSettled(redis: Redis): Promise<void> {
  if (redis.status === 'ready') return;
  let timer: NodeJS.Timeout | undefined;
  let settle = () => {};
  await new Promise<void>((resolve) => {
    settle = resolve;
    timer = setTimeout(resolve, REDIS_START_WAIT_MS);
    redis.once('ready', settle);
    redis.once('error', settle);
  });
  clearTimeout(timer);
  redis.off('ready', settle);
  redis.off('error', settle);
}

export async function startService(config: Config, options: ServiceOptions = {}): Promise<Service> {
  const log = options.log ?? createLogger(config.logLevel);
  // Metrics are kept only when METRICS_PORT is set: prom-client is loaded then, and every layer that records is handed
  // this one object (its own registry, never prom-client's global one).
  const metricsModule = config.metrics ? await import('./metrics.js') : undefined;
  const metrics =
    metricsModule && new metricsModule.Metrics({ dbSystem: config.databaseUrl ? 'postgresql' : 'pglite' });
  // The tracer, when an OTLP endpoint is set (the SDK is not loaded otherwise): every log line written while a traced
  // request is served carries its trace and span ids.
  const tracing = await startTracing(config.otel);
  if (tracing) correlateLogs(log, tracing.logFields);
  // What the process keeps for the database (statement batchers, prepared statements, where statements are recorded
  // and the tracer they are traced by): one object, closed with it.
  const store = new Store(metrics, tracing);
  const db = await createDatabase(config, log, store);
  await prepareDatabase(db);
  const redis = config.redisUrl ? await connectRedis(config, log, tracing) : undefined;
  if (redis) await redisSettled(redis);
  // What the services are built from; the web layer's parts are added to it below, where only the web sees them.
  const services: Deps = {
    config,
    db,
    log,
    now: options.now ?? Date.now,
    ids: new IdSource(),
    ucpSigningKey: ucpSigningKeyOf(config),
    profileFetchLimiter: createRateLimiter(
      {
        limit: config.protocols.profileFetchesPerMinute,
        windowSeconds: 60,
        keyPrefix: 'profile-fetches',
        unit: 'platform profiles fetched per minute for this address',
      },
      redis,
      metrics,
    ),
    deprecations: checkNoticePeriods([...DEPRECATIONS, ...(options.deprecations ?? [])]),
    earlierReads: createEarlierReads(),
    callsInProgress: createCallsInProgress(),
    validators: protocolValidators(),
    metrics,
    stripe: config.payments.mode === 'stripe' ? await createStripeClient(config.payments, tracing) : undefined,
    tracing,
  };
  metrics?.collectFrom(
    { pool: () => poolCounts(db), counts: () => readStatusCounts(db, SCRAPE_QUERY_TIMEOUT_MS) },
    SCRAPE_QUERY_TIMEOUT_MS,
  );
  const deps: WebDeps = {
    ...services,
    rateLimiter: createRateLimiter(
      { limit: config.rateLimitPerMinute, windowSeconds: 60, keyPrefix: 'rl', unit: 'requests per minute' },
      redis,
      metrics,
    ),
    lifecycle: { draining: false },
    readCache: createReadCache(),
    profiles: profileResolverOf(services),
  };
  const document = loadDocument();
  const cacheable = cacheableOperations(document);
  // The read cache's keys follow the contract's parameters: they exist once the contract (built from the handlers) does.
  const reads: { keys?: ReadKeys } = {};
  const handlers = cacheRepresentations(createHandlers(deps), cacheable, deps.readCache, () => reads.keys!);
  const contract = await createContract({
    document,
    handlers,
    validators: deps.validators,
    ...agentAuthentication(deps),
  });
  reads.keys = readKeys(contract, cacheable);
  const { ucpDisabledReason } = config.protocols;
  if (ucpDisabledReason) log.info({ reason: ucpDisabledReason }, 'UCP binding disabled');
  const requestListener = createRequestListener({
    deps,
    contract,
    reads: { cacheable: new Set(cacheable.map(({ operationId }) => operationId)), keys: reads.keys },
    limiter: deps.rateLimiter,
    registrationLimiter: createRateLimiter(
      {
        limit: config.registrationsPerHour,
        windowSeconds: 3600,
        keyPrefix: 'registrations',
        unit: 'client registrations per hour from this address',
      },
      redis,
      metrics,
    ),
    webhookRefusalLimiter: createRateLimiter(
      {
        limit: config.webhookRefusalsPerMinute,
        windowSeconds: 60,
        keyPrefix: 'webhook-refusals',
        unit: 'refused webhook requests per minute from this address',
      },
      redis,
      metrics,
    ),
    mcpServers: createMcpServers(deps, document),
    protocols: protocolBindings(deps),
  });

  // Slow clients cannot hold a socket for long: the whole request within httpRequestTimeoutMs, its headers sooner
  // (checked every second rather than Node's default 30 s); an idle keep-alive socket lives longer than typical
  // load-balancer idle timeouts, so the balancer closes first.
  const server = createServer(
    {
      headersTimeout: config.httpHeadersTimeoutMs,
      requestTimeout: config.httpRequestTimeoutMs,
      keepAliveTimeout: config.httpKeepAliveTimeoutMs,
      connectionsCheckingInterval: 1_000,
    },
    requestListener,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  // The background work starts once the service answers: its first rounds then never compete with the start (both are
  // interval timers, so they ran no sooner before; a listen that fails leaves none running).
  const stopSweeps = startRetentionSweeps(services);
  const stopWebhooks = startWebhookDelivery(services);
  const { port } = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  // The metrics listener, apart from the public one (METRICS_HOST defaults to loopback). A listen that fails stops the
  // start as the public one's does.
  const scrape = metricsModule && metrics ? await metricsModule.serveMetrics(metrics, config.metrics!) : undefined;

  return {
    deps,
    server,
    url: `http://${host}:${port}`,
    metricsUrl: scrape?.url,
    async close({ drainMs = 0 } = {}) {
      deps.lifecycle.draining = true;
      if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      // Stop accepting connections, let in-flight requests finish, then release the pool and Redis.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections go idle as their last request finishes; close each as soon as it does.
      server.closeIdleConnections();
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      await closed;
      clearInterval(sweep);
      stopSweeps();
      await stopWebhooks();
      if (scrape) {
        // Prometheus keeps its connection alive between scrapes: closed at once rather than at its idle timeout.
        const metricsClosed = new Promise<void>((resolve) => scrape.server.close(() => resolve()));
        scrape.server.closeAllConnections();
        await metricsClosed;
      }
      await db.destroy();
      store.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
      // Exports the spans still buffered.
      await tracing?.shutdown();
    },
  };
}
