#!/usr/bin/env node
// `npm run admin -- …`: the operator's commands (src/admin/commands.ts) against the database the service is configured
// with (DATABASE_URL, or PGLITE_DIR while the service is stopped: an embedded database belongs to one process).
import { loadConfig } from '../config.js';
import { createDatabase, prepareDatabase } from '../db/knex.js';
import { createLogger } from '../log.js';
import { runAdminCommand } from './commands.js';

const config = loadConfig();
const log = createLogger('warn', process.stderr);
const db = await createDatabase(config, log);
let code: number;
try {
  await prepareDatabase(db);
  code = await runAdminCommand({ db, log, now: Date.now }, process.argv.slice(2), {
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  });
} finally {
  await db.destroy();
}
process.exit(code);
