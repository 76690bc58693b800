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
  trustProxy: boolean;
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

function boolean(env: Env, name: string): boolean {
  const raw = read(env, name)?.toLowerCase();
  if (raw === undefined || ['0', 'false', 'no', 'off'].includes(raw)) return false;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
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
    trustProxy: boolean(env, 'TRUST_PROXY'),
    checkoutUrlTemplate: checkoutUrlTemplate(env, baseUrl),
    mcpAllowedOrigins: origins(env, [new URL(baseUrl).origin, new URL(agentBaseUrl).origin]),
    logLevel,
    payments: payments(env),
  };
}
