#!/usr/bin/env node
// `npm run admin -- …`: the operator's commands (src/admin/commands.ts) against the database the service is configured
// with (DATABASE_URL, or PGLITE_DIR while the service is stopped: an embedded database belongs to one process).
import { loadConfig } from '../config.js';
import { createDatabase, prepareDatabase } from '../db/knex.js';
import { createLogger } from '../log.js';
import { API_AREAS, runAdminCommand } from './commands.js';

const argv = process.argv.slice(2);
const io = {
  out: (text: string) => process.stdout.write(`${text}\n`),
  err: (text: string) => process.stderr.write(`${text}\n`),
};
let code: number;
if (argv[0] !== undefined && Object.hasOwn(API_AREAS, argv[0])) {
  // Through the API (the SDK), as the admin client: the service owns the database (its configuration is read only
  // for AGENT_BASE_URL, when ADMIN_API_URL is not set).
  code = await runAdminCommand(
    {
      baseUrl: process.env.ADMIN_API_URL || loadConfig().agentBaseUrl,
      clientId: process.env.ADMIN_CLIENT_ID ?? '',
      clientSecret: process.env.ADMIN_CLIENT_SECRET ?? '',
    },
    argv,
    io,
  );
} else {
  const log = createLogger('warn', process.stderr);
  const db = await createDatabase(loadConfig(), log);
  try {
    await prepareDatabase(db);
    code = await runAdminCommand({ db, log, now: Date.now }, argv, io);
  } finally {
    await db.destroy();
  }
}
process.exit(code);
