// Runs once before the suite: makes ready what the tests need but do not build themselves (the HTML reference, a
// reachable Redis when TEST_REDIS_URL names one), and says which storage path this run exercises, so a CI log shows both
// (and why the browser tests are skipped, when they are).
import { statSync } from 'node:fs';
import { Redis } from 'ioredis';
import { buildDocs, docsInputs, docsOutput } from '../../codegen/build-docs.mjs';
import { chromiumMissing } from './chromium.js';

const REDIS_WAIT_MS = 30_000;

function modified(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** /docs serves dist/docs.html; a fresh clone, or a contract or build step changed since the last build, needs it (re)built. */
function ensureDocs(): void {
  if (modified(docsOutput) >= Math.max(...docsInputs.map(modified))) return;
  process.stdout.write('Building the HTML reference for /docs…\n');
  buildDocs();
}

/** The Redis tests need Redis answering before the first service starts, not a server still coming up. */
async function ensureRedis(url: string): Promise<void> {
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  const deadline = Date.now() + REDIS_WAIT_MS;
  try {
    for (;;) {
      try {
        if (redis.status !== 'ready') await redis.connect();
        await redis.ping();
        return;
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`TEST_REDIS_URL=${url} does not answer: ${(error as Error).message}`, { cause: error });
        redis.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  } finally {
    redis.disconnect();
  }
}

export default async function setup(): Promise<void> {
  ensureDocs();
  const redisUrl = process.env.TEST_REDIS_URL?.trim();
  // A skipped block prints one line that nobody reads in a green run: in CI the Redis-backed tests must run.
  if (!redisUrl && process.env.CI === 'true')
    throw new Error('CI=true but TEST_REDIS_URL is not set: the Redis-backed tests would be skipped');
  if (redisUrl) await ensureRedis(redisUrl);
  const storage = process.env.DATABASE_URL?.trim()
    ? `PostgreSQL (${new URL(process.env.DATABASE_URL).host})`
    : 'embedded PGlite';
  process.stdout.write(`\nStorage under test: ${storage}\n`);
  if (chromiumMissing) process.stdout.write(`Browser tests skipped: ${chromiumMissing}\n`);
}
