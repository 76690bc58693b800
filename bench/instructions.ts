// What telemetry costs, counted rather than timed (issue #34): each row's instructions per request on the service's
// main thread, with telemetry off, metrics on and tracing on, each service run under valgrind's callgrind. A count is
// the same for the same build, input and warm-up whatever else the machine does, so a cost of a few per cent shows on
// a busy 2-core machine where requests a second (bench/telemetry-cpu.ts) vary by more than that between identical
// runs. Counts of the same build still differ by a few per cent (when the JIT compiles, when the GC runs, the hash
// seed of each process; 9 % seen on the MCP row with 3,000 requests): read a cost smaller than that as none.
// Counted: JavaScript, V8 and Node on the main thread; not the GC's and compiler's helper threads, libuv's pool, the
// kernel, nor PostgreSQL. Needs valgrind (Debian's package) and a build (`npm run build`). Dumps and each service's
// log are kept in bench/callgrind/run-*/.
//   npx tsx bench/instructions.ts [--only TEXT] [--settings off,metrics,tracing] [--warmup-requests 10000]
//                                 [--requests 5000] [--connections 8]
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { positiveNumber } from './arguments.js';
import { openDatabase } from './database.js';
import { send } from './load.js';
import { startServiceProcess, type ServerProcess } from './processes.js';
import { percent, telemetryRows, telemetrySettings } from './telemetry-settings.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    settings: { type: 'string', default: 'off,metrics,tracing' },
    'warmup-requests': { type: 'string' },
    requests: { type: 'string' },
    connections: { type: 'string' },
  },
});
const warmup = positiveNumber(values['warmup-requests'], 10_000, 'warmup-requests');
const requests = positiveNumber(values.requests, 5_000, 'requests');
const connections = positiveNumber(values.connections, 8, 'connections');
const settings = values.settings.split(',').filter(Boolean);

try {
  await run('valgrind', ['--version']);
} catch {
  console.error('bench/instructions.ts needs valgrind (apt-get install valgrind); nothing was counted.');
  process.exit(1);
}

// A directory of this run's own, so that runs side by side (one per setting) keep their dumps and logs.
mkdirSync(`${root}/bench/callgrind`, { recursive: true });
const outputs = mkdtempSync(`${root}/bench/callgrind/run-`);
// callgrind_control finds the process by a name made of the user and host valgrind saw: give both the same HOST (the
// service's is its listening address).
const controlEnv = { ...process.env, HOST: '127.0.0.1' };
const control = (option: string, service: ServerProcess) =>
  run('callgrind_control', [option, String(service.pid)], { env: controlEnv });

/** The instructions callgrind counted on the main thread (thread 1) in dump `dump` of `pid`, once it is written. */
async function mainThreadInstructions(pid: number, dump: number): Promise<number> {
  const file = `${outputs}/cg.${pid}.${dump}-01`;
  for (let tries = 0; tries < 100; tries++) {
    const summary = existsSync(file) ? /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8')) : null;
    if (summary) return Number(summary[1]);
    await delay(100);
  }
  throw new Error(`callgrind wrote no summary to ${file}`);
}

const telemetry = await telemetrySettings();
const database = await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
const counts = new Map<string, Map<string, number>>();
try {
  // One setting at a time: each service runs alone under valgrind, slow as it is, and is stopped before the next.
  for (const setting of settings) {
    const service = await startServiceProcess({
      root,
      databaseEnv: database.env,
      logFile: `${outputs}/${setting}.log`,
      env: { BASE_URL: 'https://shop.example.com', ...(await telemetry.envOf(setting)) },
      wrapper: ['valgrind', '--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${outputs}/cg.%p`],
      startupTimeoutMs: 300_000,
    });
    try {
      const rows = await telemetryRows(service.url, values.only);
      for (const [index, row] of rows.entries()) {
        const warmed = await send(service, row.load, connections, warmup);
        await control('-z', service);
        const counted = await send(service, row.load, connections, requests);
        await control('-d', service);
        const failed = warmed.non2xx + warmed.errors + counted.non2xx + counted.errors;
        if (failed > 0) throw new Error(`${row.title} [${setting}]: ${failed} requests failed`);
        const instructions = await mainThreadInstructions(service.pid, index + 1);
        const perRequest = Math.round(instructions / counted.requests);
        console.log(`${row.title} [${setting}]: ${perRequest.toLocaleString('en')} instructions a request`);
        counts.set(row.title, (counts.get(row.title) ?? new Map()).set(setting, perRequest));
      }
    } finally {
      await service.stop();
    }
  }
  const others = settings.filter((name) => name !== 'off');
  console.log(`\nInstructions a request, main thread (Node.js ${process.versions.node}); cost against off`);
  console.log(
    ['row', ...settings, ...(settings.includes('off') ? others.map((name) => `${name} cost`) : [])].join('\t'),
  );
  for (const [title, bySetting] of counts) {
    const off = bySetting.get('off');
    const costs = off ? others.map((name) => percent((bySetting.get(name) ?? NaN) / off - 1)) : [];
    console.log(
      [title, ...settings.map((name) => bySetting.get(name)?.toLocaleString('en') ?? '–'), ...costs].join('\t'),
    );
  }
} finally {
  await database.drop();
  telemetry.close();
}
