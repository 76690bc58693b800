// Starts the real service on a random port over a fresh database, with an SDK client and a validating fetch.
import { loadConfig } from '../../src/config.js';
import type { Deprecation } from '../../src/domain/versioning.js';
import { createLogger, type Logger } from '../../src/log.js';
import { startService, type Service } from '../../src/service.js';
import { createStorefrontClient, type StorefrontClient } from '../../sdk/index.js';
import { contractFetch } from './contract.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { LOOPBACK_EGRESS_ENV } from './webhook-receiver.js';

export interface TestService {
  url: string;
  service: Service;
  database: TestDatabase;
  /** The generated SDK, every response validated against the contract. */
  client: StorefrontClient;
  /** fetch against the service (relative paths allowed), every response validated against the contract. */
  http: (path: string, init?: RequestInit) => Promise<Response>;
  close(): Promise<void>;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  now?: () => number;
  database?: TestDatabase;
  deprecations?: Deprecation[];
  /** The service's logger (default: silent, or TEST_LOG_LEVEL). */
  log?: Logger;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '100000',
    ...LOOPBACK_EGRESS_ENV,
    ...database.env,
    ...options.env,
  });
  const service = await startService(config, {
    now: options.now,
    deprecations: options.deprecations,
    log: options.log ?? createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
  });
  const url = service.url;
  return {
    url,
    service,
    database,
    client: createStorefrontClient({ baseUrl: url, fetch: contractFetch }),
    http: (path, init) => contractFetch(new URL(path, url), init),
    async close() {
      await service.close();
      if (!options.database) await database.drop();
    },
  };
}
