// `npm run bench` (issues #7 and #15): every surface of the service on PostgreSQL against its ceiling in the same
// round: bare Koa answering the same bytes (catalogue reads), pgbench storing the same session once (creates), pgbench
// replaying the statement that reads a session (session read), the REST read of the same data (MCP). Rounds are
// interleaved and each row is judged on the median of its per-round ratios. Prints one table and writes
// bench/results.json. A benchmark, not a test: it exits 0 whatever the figures, and 1 only when the harness fails.
//   --duration <s>     measured seconds per run (default 10)
//   --warmup <s>       discarded warm-up seconds before each run (default 3)
//   --connections <n>  concurrent connections and pgbench clients (default 32)
//   --rounds <n>       interleaved rounds (default 3)
//   --only <text>      measure only the rows whose title contains this text (e.g. "/api/store/products")
//   --smoke            one round of about 1 s per row, to keep the harness working in CI
//   --cpu-prof         write a V8 CPU profile of the service to bench/profiles/
//   --embedded         the service on embedded PGlite (a copy of ./.data, as `npm start` without DATABASE_URL)
//   --starts <n>       fresh `npm start`s timed to the first /healthz 200, with their idle RSS (bench/startup.ts;
//                      default 3 with --embedded, 1 with --smoke, otherwise 0), measured before any other server starts
//   --start-only       only those starts (printed, and written to bench/startup-results.json)
//   --telemetry <on>   the service with `metrics` on (METRICS_PORT), or `tracing` on too (every span exported over
//                      OTLP/HTTP to a sink in this process that discards it, sampler always_on): run once without and
//                      once with, on the same machine, to read the cost of each (issue #34)
// After the rows, the longest event-loop stall while the service is sent the worst bodies and platform profiles its
// limits allow (bench/stalls.ts; --only filters those by title too).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { platformProfile } from '../src/conformance/profile.js';
import { positiveNumber } from './arguments.js';
import type { CeilingRoute } from './ceiling.js';
import { copyEmbeddedDatabase, databaseCpuProbe, openDatabase } from './database.js';
import { measure, type DatabaseCpuProbe, type LoadSettings, type Measurement } from './load.js';
import { pgbenchUnavailable, readSessionCeiling, removeStoredSessions, storeSessionCeiling } from './pgbench.js';
import {
  currentRss,
  peakRss,
  resetPeakRss,
  startCeilingProcess,
  startServiceProcess,
  type ServerProcess,
} from './processes.js';
import {
  formatReport,
  formatStartup,
  judgePeakRss,
  judgeRow,
  judgeStarts,
  type CeilingFigures,
  type Report,
  type ReportRow,
  type Round,
} from './report.js';
import { prepareRows, type Ceiling, type ReadyRow, type Row } from './rows.js';
import { measureStalls } from './stalls.js';
import { measureStarts } from './startup.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsPath = 'bench/results.json';
const logPath = 'bench/service.log';
const profilesPath = 'bench/profiles';
const startupResultsPath = 'bench/startup-results.json';

interface Options extends LoadSettings {
  rounds: number;
  only: string | undefined;
  smoke: boolean;
  cpuProf: boolean;
  embedded: boolean;
  starts: number;
  startOnly: boolean;
  telemetry: 'off' | 'metrics' | 'tracing';
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      only: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      embedded: { type: 'boolean', default: false },
      starts: { type: 'string' },
      'start-only': { type: 'boolean', default: false },
      telemetry: { type: 'string', default: 'off' },
    },
  });
  const telemetry = values.telemetry;
  if (telemetry !== 'off' && telemetry !== 'metrics' && telemetry !== 'tracing')
    throw new Error(`--telemetry is off, metrics or tracing, not ${telemetry}`);
  // Smoke: 0.1 s + 0.4 s against each server, about 1 s per row.
  const smoke = values.smoke;
  return {
    smoke,
    cpuProf: values['cpu-prof'],
    only: values.only,
    embedded: values.embedded,
    starts:
      values.starts === '0'
        ? 0
        : Math.round(positiveNumber(values.starts, smoke ? 1 : values.embedded ? 3 : 0, 'starts')),
    startOnly: values['start-only'],
    telemetry,
    durationSeconds: positiveNumber(values.duration, smoke ? 0.4 : 10, 'duration'),
    warmupSeconds: positiveNumber(values.warmup, smoke ? 0.1 : 3, 'warmup'),
    connections: Math.round(positiveNumber(values.connections, 32, 'connections')),
    rounds: Math.round(positiveNumber(values.rounds, smoke ? 1 : 3, 'rounds')),
  };
}

/** Progress on an interactive terminal only, overwritten in place, so logs and CI see nothing but the table. */
function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${text}`);
}

function ceilingRoutes(rows: Row[]): CeilingRoute[] {
  return rows
    .filter((row): row is ReadyRow => row.state === 'ready' && row.ceiling.kind === 'koa')
    .map(({ load, fixture }) => ({
      method: load.method,
      url: load.url,
      status: fixture.status,
      contentType: fixture.contentType,
      body: fixture.body.toString('base64'),
      headers: fixture.headers,
    }));
}

function ceilingName(ceiling: Ceiling, unavailable: string | undefined): string {
  const name = {
    koa: 'bare Koa, same bytes',
    'pgbench-store': 'pgbench: the same session stored once',
    'pgbench-read': 'pgbench: its statement, -M prepared',
    'rest-read': ceiling.kind === 'rest-read' ? ceiling.title : '',
  }[ceiling.kind];
  return ceiling.kind.startsWith('pgbench') && unavailable ? `${name} (unavailable: ${unavailable})` : name;
}

function fromMeasurement(figures: Measurement): CeilingFigures {
  return {
    requestsPerSecond: figures.requestsPerSecond,
    p99Ms: figures.p99Ms,
    cpuMsPerRequest: figures.cpuMsPerRequest,
    errors: figures.non2xx + figures.errors,
  };
}

interface Servers {
  service: ServerProcess;
  ceiling: ServerProcess;
  /** Bare Koa setting the service's response headers as well (bench/ceiling.ts). */
  ceilingWithHeaders: ServerProcess;
  /** PostgreSQL's URL for pgbench, unless pgbench cannot run here. */
  pgbenchUrl: string | undefined;
  /** PostgreSQL's CPU time, when its server runs on this machine. */
  databaseCpu: DatabaseCpuProbe | undefined;
}

async function measureCeiling(
  ceiling: Ceiling,
  row: ReadyRow,
  servers: Servers,
  settings: LoadSettings,
): Promise<CeilingFigures | undefined> {
  const pgbenchSettings = { clients: settings.connections, seconds: settings.durationSeconds };
  switch (ceiling.kind) {
    case 'koa':
      return fromMeasurement(await measure(servers.ceiling, row.load, settings));
    case 'rest-read':
      return fromMeasurement(await measure(servers.service, ceiling.load, settings));
    case 'pgbench-store':
    case 'pgbench-read': {
      if (!servers.pgbenchUrl) return undefined;
      const figures =
        ceiling.kind === 'pgbench-store'
          ? await storeSessionCeiling(servers.pgbenchUrl, ceiling.session, pgbenchSettings)
          : await readSessionCeiling(servers.pgbenchUrl, ceiling.sessionId, pgbenchSettings);
      return { requestsPerSecond: figures.transactionsPerSecond, errors: figures.failed };
    }
  }
}

async function measureRound(row: ReadyRow, servers: Servers, settings: LoadSettings): Promise<Round> {
  const loadAverage = loadavg()[0]!;
  progress(`${row.title}: service`);
  resetPeakRss(servers.service.pid);
  const service = await measure(servers.service, row.load, settings, servers.databaseCpu);
  const servicePeakRssBytes = peakRss(servers.service.pid);
  progress(`${row.title}: ceiling`);
  const ceiling = await measureCeiling(row.ceiling, row, servers, settings);
  const withHeaders =
    row.ceiling.kind === 'koa'
      ? fromMeasurement(await measure(servers.ceilingWithHeaders, row.load, settings))
      : undefined;
  return {
    service,
    ...(ceiling ? { ceiling, ratio: service.requestsPerSecond / ceiling.requestsPerSecond } : {}),
    ...(withHeaders
      ? { withHeaders, ratioWithHeaders: service.requestsPerSecond / withHeaders.requestsPerSecond }
      : {}),
    servicePeakRssBytes,
    loadAverage,
  };
}

/** A PostgreSQL URL naming a loopback address, or a Unix socket directory (`?host=/var/run/postgresql`). */
function onThisMachine(databaseUrl: string): boolean {
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(databaseUrl).hostname);
  } catch {
    return /[?&]host=\//.test(databaseUrl); // no host before the path: WHATWG URLs refuse it, libpq and pg accept it
  }
}

/** A platform profile the service fetches for the UCP rows (allowed over http on loopback, as in the tests). */
async function startProfileServer(): Promise<{ url: string; server: Server }> {
  const body = JSON.stringify(platformProfile());
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(body);
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/profile.json`, server };
}

/** A free loopback port, for a listener the service opens itself (its metrics). */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The service's environment for `--telemetry`: its metrics listener, and an OTLP/HTTP sink that discards spans. */
async function telemetryEnvironment(
  telemetry: Options['telemetry'],
  cleanups: Array<() => Promise<void>>,
): Promise<Record<string, string>> {
  if (telemetry === 'off') return {};
  const metrics = { METRICS_PORT: String(await freePort()), METRICS_HOST: '127.0.0.1' };
  if (telemetry === 'metrics') return metrics;
  const sink = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}'));
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  cleanups.push(async () => void sink.close());
  const { port } = sink.address() as AddressInfo;
  return {
    ...metrics,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_TRACES_SAMPLER: 'always_on',
    OTEL_SERVICE_NAME: 'storefront-bench',
  };
}

function countLines(path: string): number {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).length;
}

async function bench(options: Options, cleanups: Array<() => Promise<void>>): Promise<Report> {
  const [loadAverageAtStart = 0] = loadavg(); // other work on this small machine skews every figure
  // The starts first, while none of the bench's own servers is running beside them.
  const startup = options.starts > 0 ? judgeStarts(await measureStarts(root, options.starts)) : undefined;
  const database = options.embedded
    ? copyEmbeddedDatabase(root)
    : await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
  cleanups.push(database.drop);
  const pgbenchUrl = pgbenchUnavailable(database.env.DATABASE_URL) ? undefined : database.env.DATABASE_URL;
  if (pgbenchUrl && database.kind === 'given') cleanups.push(() => removeStoredSessions(pgbenchUrl));
  const profile = await startProfileServer();
  cleanups.push(async () => void profile.server.close());
  if (options.cpuProf) mkdirSync(`${root}/${profilesPath}`, { recursive: true });
  const telemetryEnv = await telemetryEnvironment(options.telemetry, cleanups);
  const service = await startServiceProcess({
    root,
    databaseEnv: database.env,
    logFile: `${root}/${logPath}`,
    cpuProfileDir: options.cpuProf ? `${root}/${profilesPath}` : undefined,
    // The protocol bindings need an https business URL and may fetch the bench's profile over loopback.
    env: { BASE_URL: 'https://shop.example.com', UCP_INSECURE_PROFILE_HOSTS: '127.0.0.1', ...telemetryEnv },
  });
  cleanups.push(service.stop);
  const serviceIdleRssBytes = currentRss(service.pid);
  const rows = await prepareRows(service.url, { ucpProfileUrl: profile.url });
  const routes = ceilingRoutes(rows);
  const ceiling = await startCeilingProcess({ routes, withHeaders: false });
  cleanups.push(ceiling.stop);
  const ceilingWithHeaders = await startCeilingProcess({ routes, withHeaders: true });
  cleanups.push(ceilingWithHeaders.stop);
  const databaseUrl = database.env.DATABASE_URL;
  const local = databaseUrl !== undefined && onThisMachine(databaseUrl);
  const servers = {
    service,
    ceiling,
    ceilingWithHeaders,
    pgbenchUrl,
    databaseCpu: local ? databaseCpuProbe(databaseUrl) : undefined,
  };

  let servicePeak = peakRss(service.pid); // start-up and fixtures, before the first per-row reset
  const ready = rows.filter(
    (row): row is ReadyRow => row.state === 'ready' && (!options.only || row.title.includes(options.only)),
  );
  const rounds = new Map<ReadyRow, Round[]>(ready.map((row) => [row, []]));
  for (let round = 1; round <= options.rounds; round++) {
    for (const row of ready) {
      const measured = await measureRound(row, servers, options);
      servicePeak = Math.max(servicePeak, measured.servicePeakRssBytes);
      rounds.get(row)!.push(measured);
    }
  }
  progress('event-loop stalls');
  const stalls = await measureStalls(service.url, service.pid, { repeats: options.smoke ? 1 : 5, only: options.only });
  const unavailable = pgbenchUnavailable(database.env.DATABASE_URL);
  const measuredRows = rows.filter((row) => row.state !== 'ready' || rounds.has(row));
  const reportRows: ReportRow[] = measuredRows.map((row) =>
    row.state === 'ready'
      ? judgeRow(
          {
            title: row.title,
            kind: row.kind,
            request: { method: row.load.method, url: row.load.url },
            ceilingName: ceilingName(row.ceiling, unavailable),
          },
          rounds.get(row)!,
        )
      : row,
  );
  progress('');
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      node: process.version,
      totalMemoryBytes: totalmem(),
      loadAverageAtStart,
    },
    settings: {
      connections: options.connections,
      warmupSeconds: options.warmupSeconds,
      durationSeconds: options.durationSeconds,
      rounds: options.rounds,
      smoke: options.smoke,
      telemetry: options.telemetry,
      database: database.kind,
    },
    rows: reportRows,
    stalls,
    serviceIdleRssBytes,
    peakRss: judgePeakRss(servicePeak, peakRss(ceiling.pid)),
    serviceLogLines: countLines(`${root}/${logPath}`),
    ...(startup ? { startup } : {}),
  };
}

/** Stops the servers and drops the fresh database, last started first; a failure here is a harness failure. */
async function cleanUp(cleanups: Array<() => Promise<void>>): Promise<void> {
  for (const step of cleanups.splice(0).reverse()) {
    await step().catch((error: unknown) => {
      process.stderr.write(`bench: clean-up failed: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    });
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const cleanups: Array<() => Promise<void>> = [];
  process.once('SIGINT', () => void cleanUp(cleanups).finally(() => process.exit(130)));
  if (options.startOnly) {
    const startup = judgeStarts(await measureStarts(root, Math.max(options.starts, 1)));
    writeFileSync(
      `${root}/${startupResultsPath}`,
      `${JSON.stringify({ date: new Date().toISOString(), startup }, null, 2)}\n`,
    );
    process.stdout.write(`${formatStartup(startup)}\nResults: ${startupResultsPath}\n`);
    return;
  }
  try {
    const report = await bench(options, cleanups);
    writeFileSync(`${root}/${resultsPath}`, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${formatReport(report, resultsPath, logPath)}\n`);
  } finally {
    await cleanUp(cleanups);
  }
}

main().catch((error: unknown) => {
  progress('');
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
