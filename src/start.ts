// Starts the service for `npm start` (src/main.ts): read the configuration, serve, and shut down cleanly on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './log.js';
import { startService } from './service.js';

/** After the drain, how long in-flight requests and the pool may take to finish before the process gives up. */
const SHUTDOWN_DEADLINE_MS = 10_000;

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const log = createLogger(config.logLevel);
  const service = await startService(config, { log });
  log.info(
    {
      url: service.url,
      baseUrl: config.baseUrl,
      agentBaseUrl: config.agentBaseUrl,
      storage: config.databaseUrl ? 'postgresql' : `pglite:${config.pgliteDir}`,
      ...(service.metricsUrl ? { metricsUrl: service.metricsUrl } : {}),
    },
    'storefront listening',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down: draining, then finishing in-flight requests');
    setTimeout(() => {
      log.error('shutdown deadline passed; exiting with requests still open');
      process.exit(1);
    }, config.shutdownDrainMs + SHUTDOWN_DEADLINE_MS).unref();
    service.close({ drainMs: config.shutdownDrainMs }).then(
      () => {
        log.info('shutdown complete');
        process.exit(0);
      },
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
