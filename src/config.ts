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
  trustProxy: boolean;
  checkoutUrlTemplate: string;
  mcpAllowedOrigins: string[];
  logLevel: string;
}

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
    trustProxy: boolean(env, 'TRUST_PROXY'),
    checkoutUrlTemplate: checkoutUrlTemplate(env, baseUrl),
    mcpAllowedOrigins: origins(env, [new URL(baseUrl).origin, new URL(agentBaseUrl).origin]),
    logLevel,
  };
}
