// Configuration, read once from the environment and validated at start. An empty variable counts as unset.
export interface Config {
  port: number;
  host: string;
  /** Where Prometheus scrapes `/metrics` (a listener of its own); undefined: no metrics are kept (METRICS_PORT). */
  metrics: { port: number; host: string } | undefined;
  baseUrl: string;
  agentBaseUrl: string;
  databaseUrl: string | undefined;
  pgliteDir: string;
  redisUrl: string | undefined;
  /**
   * The OpenTelemetry variables (`OTEL_*`) as set, for the tracer (src/tracing.ts): tracing is on when an OTLP endpoint
   * is named.
   */
  otel: Readonly<Record<string, string>>;
  rateLimitPerMinute: number;
  registrationsPerHour: number;
  /** Refused requests to the processor's webhook per address per minute (signed events are never counted). */
  webhookRefusalsPerMinute: number;
  /** Proxies in front of the service that append to X-Forwarded-For; 0: the socket's address is the client's. */
  trustedProxyHops: number;
  /** Longest wait for one Redis command; past it the request is counted in memory instead. */
  redisCommandTimeoutMs: number;
  /** PostgreSQL cancels a statement running longer than this (the driver gives up on the reply shortly after). */
  databaseStatementTimeoutMs: number;
  /** Node's headersTimeout / requestTimeout / keepAliveTimeout for the HTTP server. */
  httpHeadersTimeoutMs: number;
  httpRequestTimeoutMs: number;
  httpKeepAliveTimeoutMs: number;
  /** After SIGTERM, how long the listener keeps answering (readiness failing) before it closes. */
  shutdownDrainMs: number;
  retention: RetentionConfig;
  checkoutUrlTemplate: string;
  mcpAllowedOrigins: string[];
  logLevel: string;
  protocols: ProtocolConfig;
  payments: PaymentsConfig;
  /** Derives each agent's order-webhook signing secret; undefined: agents cannot register webhooks. */
  agentWebhookKey: string | undefined;
  /** Longest an order-webhook delivery may take (connect, send, answer). */
  webhookTimeoutMs: number;
  /**
   * Hosts (as URLs spell them: `127.0.0.1`, `localhost`, `[::1]`) that requests to addresses a client names may reach
   * although they resolve to a non-public address (tests and local runs); no other private address is ever reached.
   */
  egressAllowedHosts: string[];
}

/** How long anonymous writes are kept, and how often they are swept (docs/operations.md "Retention"), in ms. */
export interface RetentionConfig {
  sweepEveryMs: number;
  /** Idempotency records of the REST and MCP checkout, from the request. */
  idempotencyMs: number;
  /** Tokens, after they expire. */
  expiredTokensMs: number;
  /** Clients, after the last token they obtained (or their registration). */
  idleClientsMs: number;
  /** Agent carts still open, after their last change. */
  openCartsMs: number;
  /** Checkout sessions never paid nor cancelled, after their last change. */
  unpaidSessionsMs: number;
  /** Cancelled checkout sessions, after the cancellation. */
  canceledSessionsMs: number;
}

/** The ACP and UCP bindings (see docs/protocols.md). */
export interface ProtocolConfig {
  /**
   * The business's reverse-DNS namespace in UCP 2026-04-08's grammar (`UCP_NAMESPACE`, or BASE_URL's host reversed, `-`
   * written `_`), which ACP uses too; without one, both bindings are off.
   */
  namespace: string | undefined;
  /**
   * The same namespace in UCP 2026-08-25's grammar, which allows hyphens and leading digits: the host reversed as it is
   * (`my-shop.example.com` → `com.example.my-shop`), so that a handler's name matches its schema's host.
   */
  namespace20260825: string | undefined;
  /** Why the UCP binding is off, when it is (logged at start). */
  ucpDisabledReason: string | undefined;
  /** `strict` negotiates from the platform profile; `lenient` proceeds when the profile cannot be used (official suite). */
  profilePolicy: 'strict' | 'lenient';
  /** Hosts whose platform profiles may be fetched over plain http, and at a non-public address (tests). */
  insecureProfileHosts: string[];
  /** Platform profiles fetched on behalf of one address per minute (a profile not cached: new, or expired). */
  profileFetchesPerMinute: number;
  termsUrl: string | undefined;
  privacyUrl: string | undefined;
  /** `psp` of the ACP payment handler. */
  paymentPsp: string;
}

/** Who takes payment behind checkout_url: Stripe, or the built-in test processor (no money moves). */
export type PaymentsConfig =
  { mode: 'test' } | { mode: 'stripe'; secretKey: string; webhookSecret: string; apiUrl: string | undefined };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function boolean(env: Env, name: string): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined || ['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function absoluteUrl(env: Env, name: string, fallback: string): string {
  const raw = read(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
}

/** `true` is one trusted hop (one load balancer), `false` none, a number that many (a CDN in front of a balancer: 2). */
function proxyHops(env: Env): number {
  const raw = read(env, 'TRUST_PROXY')?.toLowerCase();
  if (raw === undefined || ['false', 'no', 'off'].includes(raw)) return 0;
  if (['true', 'yes', 'on'].includes(raw)) return 1;
  if (/^\d+$/.test(raw) && Number(raw) <= 10) return Number(raw);
  throw new ConfigError(`TRUST_PROXY must be true, false or a number of proxies from 0 to 10, got "${raw}"`);
}

const DAY_SECONDS = 24 * 60 * 60;

/**
 * The periods, each settable in seconds. The defaults are the documented ones; shorter periods exist so that a soak
 * (bench/retention-soak.ts) can show in minutes what the defaults do over weeks.
 */
function retention(env: Env): RetentionConfig {
  const seconds = (name: string, fallback: number) => integer(env, name, fallback, 1, 10 * 365 * DAY_SECONDS) * 1000;
  return {
    sweepEveryMs: seconds('RETENTION_SWEEP_SECONDS', 300),
    idempotencyMs: seconds('RETENTION_IDEMPOTENCY_SECONDS', DAY_SECONDS),
    expiredTokensMs: seconds('RETENTION_EXPIRED_TOKENS_SECONDS', DAY_SECONDS),
    idleClientsMs: seconds('RETENTION_IDLE_CLIENTS_SECONDS', 90 * DAY_SECONDS),
    openCartsMs: seconds('RETENTION_OPEN_CARTS_SECONDS', 7 * DAY_SECONDS),
    unpaidSessionsMs: seconds('RETENTION_UNPAID_SESSIONS_SECONDS', 30 * DAY_SECONDS),
    canceledSessionsMs: seconds('RETENTION_CANCELED_SESSIONS_SECONDS', 30 * DAY_SECONDS),
  };
}

function checkoutUrlTemplate(env: Env, baseUrl: string): string {
  const template = read(env, 'CHECKOUT_URL_TEMPLATE') ?? `${baseUrl}/pay/{id}`;
  if (!template.includes('{id}')) {
    throw new ConfigError(`CHECKOUT_URL_TEMPLATE must contain the {id} placeholder, got "${template}"`);
  }
  absoluteUrl({ CHECKOUT_URL_TEMPLATE: template.replaceAll('{id}', 'id') }, 'CHECKOUT_URL_TEMPLATE', '');
  return template;
}

function origins(env: Env, defaults: string[]): string[] {
  const raw = read(env, 'MCP_ALLOWED_ORIGINS');
  const listed = raw
    ? raw
        .split(',')
        .map((origin) => origin.trim())
        .filter(Boolean)
    : defaults;
  return [
    ...new Set(
      listed.map((origin) => new URL(absoluteUrl({ MCP_ALLOWED_ORIGINS: origin }, 'MCP_ALLOWED_ORIGINS', '')).origin),
    ),
  ];
}

/** UCP 2026-04-08's reverse-DNS grammar (shopping/types/reverse_domain_name.json). */
const NAMESPACE_PATTERN = /^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)+$/;
/** UCP 2026-08-25's (common/types/reverse_domain_name.json): hyphens inside segments, leading digits, punycode. */
const NAMESPACE_PATTERN_20260825 = /^[a-z](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9_-]*[a-z0-9_])?)+$/;

/**
 * `my-shop.example.com` → `com.example.my-shop` (UCP 2026-08-25) and `com.example.my_shop` (2026-04-08, ACP); none for
 * an IP address or a single-label host such as localhost. An explicit UCP_NAMESPACE in the newer grammar is written
 * with `_` for `-` in the older one, which it must then satisfy.
 */
function namespacesOf(env: Env, baseUrl: string): { namespace?: string; namespace20260825?: string } {
  const explicit = read(env, 'UCP_NAMESPACE');
  const older = (name: string) => name.replaceAll('-', '_');
  if (explicit !== undefined) {
    if (!NAMESPACE_PATTERN_20260825.test(explicit) || !NAMESPACE_PATTERN.test(older(explicit)))
      throw new ConfigError(`UCP_NAMESPACE must be a reverse-DNS name such as com.example.shop, got "${explicit}"`);
    return { namespace: older(explicit), namespace20260825: explicit };
  }
  const host = new URL(baseUrl).hostname;
  if (/^[\d.]+$/.test(host) || host.includes(':') || host.startsWith('[')) return {};
  const derived = host.split('.').reverse().join('.');
  if (!NAMESPACE_PATTERN.test(older(derived))) return {};
  return {
    namespace: older(derived),
    namespace20260825: NAMESPACE_PATTERN_20260825.test(derived) ? derived : older(derived),
  };
}

function protocolConfig(env: Env, baseUrl: string, checkoutTemplate: string): ProtocolConfig {
  const { namespace, namespace20260825 } = namespacesOf(env, baseUrl);
  const policy = read(env, 'UCP_PLATFORM_PROFILE_POLICY') ?? 'strict';
  if (policy !== 'strict' && policy !== 'lenient')
    throw new ConfigError(`UCP_PLATFORM_PROFILE_POLICY must be strict or lenient, got "${policy}"`);
  const insecure = boolean(env, 'UCP_ALLOW_INSECURE_URLS');
  // UCP requires https for continue_url and endpoints; UCP_ALLOW_INSECURE_URLS is for loopback tests only.
  const plainHttp = [baseUrl, checkoutTemplate.replaceAll('{id}', 'id')].some(
    (url) => new URL(url).protocol !== 'https:',
  );
  let ucpDisabledReason: string | undefined;
  if (!namespace)
    ucpDisabledReason = 'no business namespace: set UCP_NAMESPACE (BASE_URL is an IP address or localhost)';
  else if (plainHttp && !insecure) {
    if (read(env, 'UCP_NAMESPACE'))
      throw new ConfigError(
        'UCP needs https: BASE_URL and CHECKOUT_URL_TEMPLATE must be https URLs (UCP_ALLOW_INSECURE_URLS=true is for tests only)',
      );
    ucpDisabledReason = 'BASE_URL or CHECKOUT_URL_TEMPLATE is not https';
  }
  const optionalUrl = (name: string) => (read(env, name) === undefined ? undefined : absoluteUrl(env, name, ''));
  return {
    namespace,
    namespace20260825,
    ucpDisabledReason,
    profilePolicy: policy,
    insecureProfileHosts: hosts(env, 'UCP_INSECURE_PROFILE_HOSTS'),
    profileFetchesPerMinute: integer(env, 'UCP_PROFILE_FETCHES_PER_MINUTE', 10, 1, 1_000_000),
    termsUrl: optionalUrl('TERMS_URL'),
    privacyUrl: optionalUrl('PRIVACY_URL'),
    paymentPsp: read(env, 'PAYMENT_PSP') ?? 'external',
  };
}

const PAYMENT_MODES = ['stripe', 'test'];

/**
 * Stripe when its keys are set; otherwise the test processor, which production refuses unless asked for explicitly
 * (a store that looks open but cannot take money is worse than one that does not start).
 */
function payments(env: Env): PaymentsConfig {
  const secretKey = read(env, 'STRIPE_SECRET_KEY');
  const webhookSecret = read(env, 'STRIPE_WEBHOOK_SECRET');
  const requested = read(env, 'PAYMENTS_MODE')?.toLowerCase();
  if (requested !== undefined && !PAYMENT_MODES.includes(requested))
    throw new ConfigError(`PAYMENTS_MODE must be stripe or test, got "${requested}"`);
  if (Boolean(secretKey) !== Boolean(webhookSecret))
    throw new ConfigError('STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET must be set together');
  const apiUrl = read(env, 'STRIPE_API_URL') === undefined ? undefined : absoluteUrl(env, 'STRIPE_API_URL', '');
  if (requested === 'test') return { mode: 'test' };
  if (secretKey && webhookSecret) return { mode: 'stripe', secretKey, webhookSecret, apiUrl };
  if (requested === 'stripe')
    throw new ConfigError('PAYMENTS_MODE=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  if (read(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(
      'NODE_ENV=production and no payment processor is configured: set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET, or PAYMENTS_MODE=test to take test payments (no money moves)',
    );
  }
  return { mode: 'test' };
}

/**
 * Webhook secrets are derived from this key and never stored. Outside production a fixed development key stands in,
 * so webhooks work out of the box; production must set its own (or agents cannot register webhook URLs).
 */
const DEVELOPMENT_WEBHOOK_KEY = 'storefront-development-webhook-key-not-for-production';

function agentWebhookKey(env: Env): string | undefined {
  const key = read(env, 'AGENT_WEBHOOK_KEY');
  if (key !== undefined && key.length < 32)
    throw new ConfigError(`AGENT_WEBHOOK_KEY must be at least 32 characters, got ${key.length}`);
  return key ?? (read(env, 'NODE_ENV') === 'production' ? undefined : DEVELOPMENT_WEBHOOK_KEY);
}

/**
 * Comma-separated hosts, each as a URL's hostname spells it (so `127.1` is `127.0.0.1`, and an IPv6 address is written
 * in brackets): a host that names anything more (a port, a path) or cannot be a hostname stops the start.
 */
function hosts(env: Env, name: string): string[] {
  const listed = (read(env, name) ?? '')
    .split(',')
    .map((host) => host.trim())
    .filter(Boolean);
  return listed.map((host) => {
    let url: URL | undefined;
    try {
      url = new URL(`http://${host}`);
    } catch {
      url = undefined;
    }
    if (!url || url.href !== `http://${url.hostname}/`)
      throw new ConfigError(`${name} must list hosts without scheme, port or path (IPv6 in brackets), got "${host}"`);
    return url.hostname;
  });
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const baseUrl = absoluteUrl(env, 'BASE_URL', `http://localhost:${port}`);
  const agentBaseUrl = absoluteUrl(env, 'AGENT_BASE_URL', baseUrl);
  const logLevel = read(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const httpHeadersTimeoutMs = integer(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 1_000, 600_000);
  const httpRequestTimeoutMs = integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000);
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs) {
    throw new ConfigError(
      `HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${httpRequestTimeoutMs})`,
    );
  }
  return {
    port,
    host: read(env, 'HOST') ?? '0.0.0.0',
    metrics:
      read(env, 'METRICS_PORT') === undefined
        ? undefined
        : { port: integer(env, 'METRICS_PORT', 9464, 0, 65535), host: read(env, 'METRICS_HOST') ?? '127.0.0.1' },
    baseUrl,
    agentBaseUrl,
    databaseUrl: read(env, 'DATABASE_URL'),
    pgliteDir: read(env, 'PGLITE_DIR') ?? './.data',
    redisUrl: read(env, 'REDIS_URL'),
    otel: Object.fromEntries(
      Object.keys(env).flatMap((name) => {
        const value = name.startsWith('OTEL_') ? read(env, name) : undefined;
        return value === undefined ? [] : [[name, value]];
      }),
    ),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000_000),
    registrationsPerHour: integer(env, 'REGISTRATIONS_PER_HOUR', 20, 1, 1_000_000),
    webhookRefusalsPerMinute: integer(env, 'WEBHOOK_REFUSALS_PER_MINUTE', 120, 1, 1_000_000),
    trustedProxyHops: proxyHops(env),
    redisCommandTimeoutMs: integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 50, 1, 60_000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5_000, 100, 600_000),
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: integer(env, 'HTTP_KEEPALIVE_TIMEOUT_MS', 65_000, 1_000, 600_000),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 5_000, 0, 120_000),
    retention: retention(env),
    checkoutUrlTemplate: checkoutUrlTemplate(env, baseUrl),
    protocols: protocolConfig(env, baseUrl, checkoutUrlTemplate(env, baseUrl)),
    mcpAllowedOrigins: origins(env, [new URL(baseUrl).origin, new URL(agentBaseUrl).origin]),
    logLevel,
    payments: payments(env),
    agentWebhookKey: agentWebhookKey(env),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 5_000, 100, 60_000),
    egressAllowedHosts: hosts(env, 'EGRESS_ALLOWED_HOSTS'),
  };
}
