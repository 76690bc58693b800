// npm run feed:export -- [--country CC] [--url BASE_URL] [--out FILE]
// Writes the catalogue as ACP 2026-04-17's `UpsertProductsRequest` (schema.feed.json), the body a platform's feed API
// takes, checked against the protocol's schema before it is written. It reads the database the service is configured
// with (DATABASE_URL, or the embedded one in PGLITE_DIR: stop the service first, PGlite is single-process), or, with
// --url, a running service's GET /acp/feed/products. Exit code: 0 written, 1 failed, 2 bad usage.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { createDatabase, prepareDatabase } from './db/knex.js';
import { isCountryCode } from './domain/acp-feed.js';
import { createLogger } from './log.js';
import { protocolSchemaProblems, protocolValidators } from './protocols/schemas.js';
import { readAcpFeed } from './services/acp-feed.js';

const USAGE = `usage: npm run feed:export -- [--country CC] [--url BASE_URL] [--out FILE]

  --country CC   ISO 3166-1 alpha-2 target country (default: the default region's first country)
  --url URL      read the feed from a running service at URL instead of the database
  --out FILE     write to FILE instead of standard output
  --timeout-ms N the --url request's timeout (default 10000)`;

class ExportFailed extends Error {}

function usage(message: string): never {
  console.error(message);
  console.error(USAGE);
  process.exit(2);
}

async function fromService(baseUrl: string, country: string | undefined, timeoutMs: number): Promise<unknown> {
  const url = new URL('/acp/feed/products', baseUrl);
  if (country) url.searchParams.set('target_country', country);
  const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  const body = (await response.json()) as { message?: string; products?: unknown };
  if (!response.ok) throw new ExportFailed(`${url} answered ${response.status}: ${body.message ?? ''}`);
  return { products: body.products };
}

async function fromDatabase(country: string | undefined): Promise<unknown> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' });
  const db = await createDatabase(config, createLogger(config.logLevel));
  try {
    await prepareDatabase(db);
    const outcome = await readAcpFeed(db, country);
    if (outcome.kind === 'country_not_served')
      throw new ExportFailed(`The store does not sell to ${country}; it sells to ${outcome.served.join(', ')}.`);
    return { products: outcome.products };
  } finally {
    await db.destroy();
  }
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        country: { type: 'string' },
        url: { type: 'string' },
        out: { type: 'string' },
        'timeout-ms': { type: 'string' },
      },
    }));
  } catch (error) {
    usage((error as Error).message);
  }
  const country = values.country;
  if (country !== undefined && !isCountryCode(country)) usage('--country is an ISO 3166-1 alpha-2 code, such as DE.');
  const timeoutMs = Number(values['timeout-ms'] ?? 10_000);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) usage('--timeout-ms is a positive integer.');
  const feed = values.url ? await fromService(values.url, country, timeoutMs) : await fromDatabase(country);
  const problems = protocolSchemaProblems(protocolValidators(), 'acp.feed.UpsertProductsRequest', feed);
  if (problems.length)
    throw new ExportFailed(`The feed does not validate against ACP's schema: ${JSON.stringify(problems)}`);
  const text = `${JSON.stringify(feed, null, 2)}\n`;
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
}

main().catch((error) => {
  const known = error instanceof ExportFailed || error instanceof ConfigError;
  console.error(`feed:export failed: ${known ? error.message : error instanceof Error ? error.stack : String(error)}`);
  process.exit(1);
});
