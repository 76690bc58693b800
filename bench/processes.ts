// The servers under load run as child processes: the load generator then never shares their event loop, and the
// service's memory is its own, read from /proc/<pid>/status (Linux only).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { CeilingSetup } from './ceiling.js';

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;
const LOG_TAIL_CHARS = 4_000;

export interface ServerProcess {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

export interface ServiceProcessOptions {
  root: string;
  /** DATABASE_URL or PGLITE_DIR. */
  databaseEnv: Record<string, string>;
  /** Receives the service's stdout and stderr. */
  logFile: string;
  /** When set, the service writes a V8 CPU profile there as it exits. */
  cpuProfileDir?: string;
  /** More settings, over the defaults below (e.g. a payment processor). */
  env?: Record<string, string>;
  /** A command the service runs under (`valgrind --tool=callgrind …`): it is given node and its arguments. */
  wrapper?: string[];
  /** How long start-up may take (default 60 s; a service under valgrind runs tens of times slower). */
  startupTimeoutMs?: number;
}

export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function logTail(logFile: string): string {
  return readFileSync(logFile, 'utf8').slice(-LOG_TAIL_CHARS);
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/api/store/products?limit=1`)).ok;
  } catch {
    return false;
  }
}

/** Waits until the catalogue answers: by then migrations and the seed have run. */
async function waitUntilServing(
  child: ChildProcess,
  url: string,
  logFile: string,
  timeoutMs = STARTUP_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
    if (await answers(url)) return;
    await delay(200);
  }
  const why =
    child.exitCode === null && child.signalCode === null ? `did not answer within ${timeoutMs / 1000} s` : 'exited';
  throw new Error(`the service ${why}; its output:\n${logTail(logFile)}`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** The node flags of the package's start script (`node <flags> dist/src/main.js`), so that the bench runs what `npm start` runs. */
function startFlags(root: string): string[] {
  const start =
    (JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { scripts: Record<string, string> }).scripts.start ??
    '';
  const match = /^node\s+(.*?)\s*dist\/src\/main\.js$/.exec(start.trim());
  if (!match) throw new Error(`package.json's start script is not "node <flags> dist/src/main.js": ${start}`);
  return match[1]!.split(/\s+/).filter(Boolean);
}

export async function startServiceProcess(options: ServiceProcessOptions): Promise<ServerProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const profiling = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const log = openSync(options.logFile, 'w');
  // The built service with the same V8 flags as `npm start` (`npm run bench` builds first), on the Node.js that runs the
  // bench unless BENCH_SERVICE_NODE names another (the load generator then keeps its own).
  const node = process.env.BENCH_SERVICE_NODE?.trim() || process.execPath;
  const [command, ...wrapperArgs] = options.wrapper ?? [];
  const child = spawn(
    command ?? node,
    [...(command ? [...wrapperArgs, node] : []), ...profiling, ...startFlags(options.root), 'dist/src/main.js'],
    {
      cwd: options.root,
      stdio: ['ignore', log, log],
      env: {
        ...process.env,
        NODE_ENV: 'production',
        // Production refuses to start without a payment processor; the bench pays nothing, test mode suffices.
        PAYMENTS_MODE: 'test',
        PORT: String(port),
        HOST: '127.0.0.1',
        BASE_URL: url,
        DATABASE_URL: '',
        ...options.databaseEnv,
        LOG_LEVEL: 'warn',
        // The load comes from one address; the limiter must count it without ever answering 429. Cached reads pass
        // 15,000 a second, so a million a minute ran out within a round and turned the rest into 429s.
        RATE_LIMIT_PER_MINUTE: '1000000000',
        // Likewise the platform profiles the bench names (a new one per stall row) are fetched from that one address.
        UCP_PROFILE_FETCHES_PER_MINUTE: '1000000',
        ...options.env,
      },
    },
  );
  closeSync(log);
  try {
    await waitUntilServing(child, url, options.logFile, options.startupTimeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { pid: child.pid!, url, stop: () => stopChild(child) };
}

/** Resolves with the first IPC message, or rejects if the child exits before sending one. */
async function firstMessage(child: ChildProcess): Promise<unknown> {
  const exited = once(child, 'exit').then(([code]) => {
    throw new Error(`the ceiling server exited with code ${code} before listening`);
  });
  const [message] = await Promise.race([once(child, 'message'), exited]);
  return message;
}

export async function startCeilingProcess(setup: CeilingSetup): Promise<ServerProcess> {
  const child = fork(fileURLToPath(new URL('./ceiling.ts', import.meta.url)), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.send(setup);
  const { port } = (await firstMessage(child)) as { port: number };
  return { pid: child.pid!, url: `http://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

// USER_HZ: the unit of /proc/<pid>/stat CPU times, 100 on every Linux architecture Node supports.
const TICKS_PER_SECOND = 100;

/** CPU time (user + system, all threads) the process has used so far, in milliseconds. */
export function cpuMs(pid: number): number {
  // The command name (field 2) may hold spaces; utime and stime are fields 14 and 15, counted after its ')'.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** A memory figure of /proc/<pid>/status, in bytes. */
function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) * 1024;
}

/** Resident set size in bytes now. */
export function currentRss(pid: number): number {
  return statusBytes(pid, 'VmRSS');
}

/** Peak resident set size in bytes since the process started or since the last resetPeakRss. */
export function peakRss(pid: number): number {
  return statusBytes(pid, 'VmHWM');
}

/** Restarts the peak at the current RSS, so each row reports its own peak (clear_refs value 5, Linux 4.0+). */
export function resetPeakRss(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}
