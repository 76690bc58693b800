// Configuration, read once from the environment and validated at start. An empty variable counts as unset.
export interface Config {
  port: number;
  host: string;
  baseUrl: string;
  agentBaseUrl: string;
  databaseUrl: string | undefined;
  pgliteDir: string;
  redisUrl: string | undefined;
  rateLimitPerMinute: number;
  registrationsPerHour: number;
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
  checkoutUrlTemplate: string;
  mcpAllowedOrigins: string[];
  logLevel: string;
  payments: PaymentsConfig;
}

/** Who takes payment behind checkout_url: Stripe, or the built-in test processor (no money moves). */
export type PaymentsConfig =
  | { mode: 'test' }
  | { mode: 'stripe'; secretKey: string; webhookSecret: string; apiUrl: string | undefined };

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
  const listed = raw ? raw.split(',').map((origin) => origin.trim()).filter(Boolean) : defaults;
  return [...new Set(listed.map((origin) => new URL(absoluteUrl({ MCP_ALLOWED_ORIGINS: origin }, 'MCP_ALLOWED_ORIGINS', '')).origin))];
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
  if (requested !== undefined && !PAYMENT_MODES.includes(requested)) throw new ConfigError(`PAYMENTS_MODE must be stripe or test, got "${requested}"`);
  if (Boolean(secretKey) !== Boolean(webhookSecret)) throw new ConfigError('STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET must be set together');
  const apiUrl = read(env, 'STRIPE_API_URL') === undefined ? undefined : absoluteUrl(env, 'STRIPE_API_URL', '');
  if (requested === 'test') return { mode: 'test' };
  if (secretKey && webhookSecret) return { mode: 'stripe', secretKey, webhookSecret, apiUrl };
  if (requested === 'stripe') throw new ConfigError('PAYMENTS_MODE=stripe needs STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET');
  if (read(env, 'NODE_ENV') === 'production') {
    throw new ConfigError(
      'NODE_ENV=production and no payment processor is configured: set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET, or PAYMENTS_MODE=test to take test payments (no money moves)',
    );
  }
  return { mode: 'test' };
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
    throw new ConfigError(`HTTP_HEADERS_TIMEOUT_MS (${httpHeadersTimeoutMs}) must not exceed HTTP_REQUEST_TIMEOUT_MS (${httpRequestTimeoutMs})`);
  }
  return {
    port,
    host: read(env, 'HOST') ?? '0.0.0.0',
    baseUrl,
    agentBaseUrl,
    databaseUrl: read(env, 'DATABASE_URL'),
    pgliteDir: read(env, 'PGLITE_DIR') ?? './.data',
    redisUrl: read(env, 'REDIS_URL'),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    registrationsPerHour: integer(env, 'REGISTRATIONS_PER_HOUR', 20, 1, 1_000_000),
    trustedProxyHops: proxyHops(env),
    redisCommandTimeoutMs: integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 50, 1, 60_000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5_000, 100, 600_000),
    httpHeadersTimeoutMs,
    httpRequestTimeoutMs,
    httpKeepAliveTimeoutMs: integer(env, 'HTTP_KEEPALIVE_TIMEOUT_MS', 65_000, 1_000, 600_000),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 5_000, 0, 120_000),
    checkoutUrlTemplate: checkoutUrlTemplate(env, baseUrl),
    mcpAllowedOrigins: origins(env, [new URL(baseUrl).origin, new URL(agentBaseUrl).origin]),
    logLevel,
    payments: payments(env),
  };
}
