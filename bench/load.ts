// One autocannon run against one server, reduced to the figures the report needs.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { cpuMs, type ServerProcess } from './processes.js';

export interface Load {
  method: 'GET' | 'POST';
  /** Path and query. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Headers given a new random value on every request (an Idempotency-Key, so that each request creates). */
  freshHeaders?: string[];
  /** Paths and queries sent in turn instead of `url` (reads that mean different things, so that each one misses). */
  rotatingUrls?: string[];
}

export interface Measurement {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** CPU time of the server process per response: unlike requests/s, barely moved by other load on the machine. */
  cpuMsPerRequest: number;
  /** CPU time of the PostgreSQL backends serving the service's database per response, when they can be read. */
  databaseCpuMsPerRequest?: number;
}

/** Starts counting the database's CPU time; the returned function says how many ms were used since. */
export type DatabaseCpuProbe = () => Promise<() => Promise<number>>;

export interface LoadSettings {
  connections: number;
  warmupSeconds: number;
  durationSeconds: number;
}

type Run = Omit<Measurement, 'cpuMsPerRequest'>;

/** How long a run lasts: so many seconds, or so many requests. */
type Length = { duration: number } | { amount: number };

async function run(baseUrl: string, load: Load, connections: number, length: Length): Promise<Run> {
  const fresh = load.freshHeaders ?? [];
  const rotating = load.rotatingUrls ?? [];
  let turn = 0;
  const result = await autocannon({
    url: baseUrl + load.url,
    method: load.method,
    headers: load.headers,
    body: load.body,
    connections,
    ...length,
    ...(fresh.length || rotating.length
      ? {
          requests: [
            {
              setupRequest: (request) => ({
                ...request,
                ...(rotating.length ? { path: rotating[turn++ % rotating.length] } : {}),
                headers: { ...request.headers, ...Object.fromEntries(fresh.map((name) => [name, randomUUID()])) },
              }),
            },
          ],
        }
      : {}),
  });
  return {
    // Completed responses over the actual run time: autocannon's per-second samples miss sub-second smoke runs.
    requestsPerSecond: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

/** A discarded warm-up run (JIT, connection pools, caches), then the measured run. */
export async function measure(
  server: ServerProcess,
  load: Load,
  settings: LoadSettings,
  databaseCpu?: DatabaseCpuProbe,
): Promise<Measurement> {
  if (settings.warmupSeconds > 0)
    await run(server.url, load, settings.connections, { duration: settings.warmupSeconds });
  const databaseCpuSince = await databaseCpu?.();
  const cpuBefore = cpuMs(server.pid);
  const figures = await run(server.url, load, settings.connections, { duration: settings.durationSeconds });
  const cpuMsPerRequest = (cpuMs(server.pid) - cpuBefore) / figures.requests;
  if (!databaseCpuSince) return { ...figures, cpuMsPerRequest };
  return { ...figures, cpuMsPerRequest, databaseCpuMsPerRequest: (await databaseCpuSince()) / figures.requests };
}

/** Sends `amount` requests of `load` and waits for every answer (a fixed amount, for counts rather than rates). */
export function send(server: ServerProcess, load: Load, connections: number, amount: number): Promise<Run> {
  return run(server.url, load, connections, { amount });
}
