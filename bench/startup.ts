// Issue #30, item 6: how long `npm start` takes to serve, and how much memory the started service holds, on the
// embedded default. Each start is a new process tree (`npm start` itself, npm's own start-up included) on its own copy
// of a data folder prepared as `npm ci` prepares a new clone's (`node dist/src/prepare-data.js`), timed from the spawn
// to the first 200 on GET /healthz; its idle RSS is read from /proc once it has sat unused for IDLE_SETTLE_MS.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { cpuMs, currentRss, freePort } from './processes.js';

const START_TIMEOUT_MS = 60_000;
/** After its first answer the service still finishes background work (optimising compiles, the first sweeps). */
const IDLE_SETTLE_MS = 10_000;
const POLL_INTERVAL_MS = 10;

export const MAX_START_MS = 3_000;
export const MAX_IDLE_RSS_BYTES = 200 * 1_000_000;

export interface Start {
  /** From spawning `npm start` to the first 200 on GET /healthz. */
  startMs: number;
  /** CPU the service's process (node, not npm) had used by then: the part of the start the machine's load cannot stretch. */
  serviceCpuMs: number;
  /** RSS of the service's process after IDLE_SETTLE_MS without requests. */
  idleRssBytes: number;
  /** 1-minute load average as the start began. */
  loadAverage: number;
}

/** A data folder as `npm ci` leaves a new clone's `./.data`: created, migrated and seeded by the built prepare script. */
async function preparedDataFolder(root: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'storefront-start-prepared-'));
  const folder = join(dir, 'data');
  await promisify(execFile)(process.execPath, ['dist/src/prepare-data.js'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: '', PGLITE_DIR: folder, LOG_LEVEL: 'warn' },
    timeout: 300_000,
  });
  if (!existsSync(join(folder, 'PG_VERSION'))) throw new Error(`prepare-data left no PGlite folder in ${folder}`);
  return folder;
}

function withoutNodeEnv(): NodeJS.ProcessEnv {
  const { NODE_ENV: _ignored, ...env } = process.env;
  return env;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`);
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

/** The process running `dist/src/main.js` among the spawned tree (npm starts a shell, whose one argument names it too). */
function servicePid(rootPid: number): number | undefined {
  const pending = [rootPid];
  while (pending.length) {
    const pid = pending.shift()!;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('dist/src/main.js')) return pid;
      for (const task of readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean))
        pending.push(Number(task));
    } catch {
      // The process exited meanwhile.
    }
  }
  return undefined;
}

async function stopTree(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  // The spawned tree is its own process group: npm, its shell and the service stop together.
  process.kill(-child.pid!, 'SIGTERM');
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

async function measureStart(root: string, prepared: string): Promise<Start> {
  const dataDir = mkdtempSync(join(tmpdir(), 'storefront-start-'));
  cpSync(prepared, dataDir, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const loadAverage = loadavg()[0]!;
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'ignore', 'pipe'],
    // A newcomer's environment: the defaults, but for the folder and the port (no NODE_ENV, no payment processor).
    env: { ...withoutNodeEnv(), DATABASE_URL: '', PGLITE_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' },
  });
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => void (output = (output + chunk.toString()).slice(-4_000)));
  try {
    const deadline = started + START_TIMEOUT_MS;
    while (!(await healthy(url))) {
      if (child.exitCode !== null || performance.now() > deadline)
        throw new Error(`npm start did not answer /healthz; its output:\n${output}`);
      await delay(POLL_INTERVAL_MS);
    }
    const startMs = performance.now() - started;
    const pid = servicePid(child.pid!);
    if (pid === undefined) throw new Error('no process runs dist/src/main.js under npm start');
    const serviceCpuMs = cpuMs(pid);
    await delay(IDLE_SETTLE_MS);
    return { startMs, serviceCpuMs, idleRssBytes: currentRss(pid), loadAverage };
  } finally {
    await stopTree(child).catch(() => child.kill('SIGKILL'));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `count` fresh starts, one after another, on copies of one freshly prepared data folder. */
export async function measureStarts(root: string, count: number): Promise<Start[]> {
  const prepared = await preparedDataFolder(root);
  try {
    const starts: Start[] = [];
    for (let index = 0; index < count; index++) starts.push(await measureStart(root, prepared));
    return starts;
  } finally {
    rmSync(join(prepared, '..'), { recursive: true, force: true });
  }
}
