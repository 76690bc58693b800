// Run once at install (the package's `prepare` script, after the build): creates, migrates and seeds the embedded
// database in PGLITE_DIR (./.data), so that the first `npm start` opens a ready database instead of running initdb,
// every migration and the seed before it can answer. With DATABASE_URL set, or an in-memory PGlite, there is nothing
// to prepare: the service migrates at start as always.
import { ConfigError, loadConfig } from './config.js';
import { createDatabase, prepareDatabase } from './db/knex.js';
import { createLogger } from './log.js';

async function main(): Promise<void> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL || 'warn' });
  if (config.databaseUrl || config.pgliteDir.startsWith('memory://')) return;
  const db = await createDatabase(config, createLogger(config.logLevel));
  try {
    await prepareDatabase(db);
  } finally {
    await db.destroy();
  }
  process.stdout.write(`Embedded database ready in ${config.pgliteDir}\n`);
}

main().catch((error) => {
  process.stderr.write(
    `Preparing the embedded database failed: ${error instanceof ConfigError ? error.message : error instanceof Error ? error.stack : String(error)}\n`,
  );
  process.exit(1);
});
