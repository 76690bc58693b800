// Runs the service as a real child process (`node --import tsx src/main.ts`), as `npm start` would, for tests of
// signals, restarts and several instances.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { projectPath } from '../../src/paths.js';
import { trackChild } from './cleanup.js';
import { LOOPBACK_EGRESS_ENV } from './webhook-receiver.js';

/**
 * How long a child may take from spawn to its first ready answer (tsx compiles the sources, migrations run): generous,
 * because other work shares the machine's cores. Tests that start processes take their limit from it.
 */
export const PROCESS_START_TIMEOUT_MS = 90_000;

/** A test's limit when it starts `starts` processes one after another, plus time for its own requests. */
export function processTestTimeout(starts: number): number {
  return starts * PROCESS_START_TIMEOUT_MS + 30_000;
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitUntilReady(url: string, exited: Promise<unknown>, output: () => string): Promise<void> {
  const deadline = Date.now() + PROCESS_START_TIMEOUT_MS;
  let gone = false;
  void exited.then(() => (gone = true));
  while (Date.now() < deadline && !gone) {
    try {
      if ((await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) })).ok) return;
    } catch {
      // not listening yet, or too busy to answer within 5 s
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`service did not become ready:\n${output()}`);
}

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['--import', 'tsx', projectPath('src', 'main.ts')], {
    cwd: projectPath(),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000',
      ...LOOPBACK_EGRESS_ENV,
      SHUTDOWN_DRAIN_MS: '0',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  trackChild(child);
  let log = '';
  child.stdout!.on('data', (chunk) => (log += chunk));
  child.stderr!.on('data', (chunk) => (log += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await waitUntilReady(url, exited, () => log);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    child,
    output: () => log,
    exited,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
