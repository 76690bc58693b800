// `npm run bench` (issue #7): the service on PostgreSQL against the ceiling of its stack, a bare Koa server answering
// the same bytes. Prints one table and writes bench/results.json. A benchmark, not a test: it exits 0 whatever the
// figures, and 1 only when the harness itself fails.
//   --duration <s>     measured seconds per run (default 10)
//   --warmup <s>       discarded warm-up seconds before each run (default 3)
//   --connections <n>  concurrent connections (default 32)
//   --smoke            about 1 s per row, to keep the harness working in CI
//   --cpu-prof         write a V8 CPU profile of the service to bench/profiles/
//   --embedded         the service on embedded PGlite (a copy of ./.data, as `npm start` without DATABASE_URL)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CeilingRoute } from './ceiling.js';
import { copyEmbeddedDatabase, openDatabase } from './database.js';
import { measure, type LoadSettings } from './load.js';
import { peakRss, resetPeakRss, startCeilingProcess, startServiceProcess, type ServerProcess } from './processes.js';
import { formatReport, judgePeakRss, judgeRow, type Report, type ReportRow } from './report.js';
import { prepareRows, type ReadyRow, type Row } from './rows.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const resultsPath = 'bench/results.json';
const logPath = 'bench/service.log';
const profilesPath = 'bench/profiles';

interface Options extends LoadSettings {
  smoke: boolean;
  cpuProf: boolean;
  embedded: boolean;
}

function positiveNumber(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(value > 0)) throw new Error(`--${name} must be a positive number, got "${raw}"`);
  return value;
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      smoke: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      embedded: { type: 'boolean', default: false },
    },
  });
  // Smoke: 0.1 s + 0.4 s against each server, about 1 s per row.
  const smoke = values.smoke;
  return {
    smoke,
    cpuProf: values['cpu-prof'],
    embedded: values.embedded,
    durationSeconds: positiveNumber(values.duration, smoke ? 0.4 : 10, 'duration'),
    warmupSeconds: positiveNumber(values.warmup, smoke ? 0.1 : 3, 'warmup'),
    connections: Math.round(positiveNumber(values.connections, 32, 'connections')),
  };
}

/** Progress on an interactive terminal only, overwritten in place, so logs and CI see nothing but the table. */
function progress(text: string): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K${text}`);
}

function ceilingRoutes(rows: Row[]): CeilingRoute[] {
  return rows
    .filter((row): row is ReadyRow => row.state === 'ready')
    .map(({ load, fixture }) => ({
      method: load.method,
      url: load.url,
      status: fixture.status,
      contentType: fixture.contentType,
      body: fixture.body.toString('base64'),
    }));
}

async function measureRow(
  row: ReadyRow,
  service: ServerProcess,
  ceiling: ServerProcess,
  settings: LoadSettings,
): Promise<ReportRow> {
  progress(`${row.title}: service`);
  resetPeakRss(service.pid);
  const serviceFigures = await measure(service, row.load, settings);
  const servicePeakRssBytes = peakRss(service.pid);
  progress(`${row.title}: ceiling`);
  const ceilingFigures = await measure(ceiling, row.load, settings);
  const request = { method: row.load.method, url: row.load.url };
  return judgeRow({ title: row.title, kind: row.kind, request }, serviceFigures, ceilingFigures, servicePeakRssBytes);
}

function countLines(path: string): number {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).length;
}

async function bench(options: Options, cleanups: Array<() => Promise<void>>): Promise<Report> {
  const [loadAverageAtStart = 0] = loadavg(); // other work on this small machine skews every figure
  const database = options.embedded
    ? copyEmbeddedDatabase(root)
    : await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
  cleanups.push(database.drop);
  if (options.cpuProf) mkdirSync(`${root}/${profilesPath}`, { recursive: true });
  const service = await startServiceProcess({
    root,
    databaseEnv: database.env,
    logFile: `${root}/${logPath}`,
    cpuProfileDir: options.cpuProf ? `${root}/${profilesPath}` : undefined,
  });
  cleanups.push(service.stop);
  const rows = await prepareRows(service.url);
  const ceiling = await startCeilingProcess(ceilingRoutes(rows));
  cleanups.push(ceiling.stop);

  let servicePeak = peakRss(service.pid); // start-up and fixtures, before the first per-row reset
  const reportRows: ReportRow[] = [];
  for (const row of rows) {
    const reported = row.state === 'ready' ? await measureRow(row, service, ceiling, options) : row;
    if (reported.state === 'measured') servicePeak = Math.max(servicePeak, reported.servicePeakRssBytes);
    reportRows.push(reported);
  }
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
      smoke: options.smoke,
      database: database.kind,
    },
    rows: reportRows,
    peakRss: judgePeakRss(servicePeak, peakRss(ceiling.pid)),
    serviceLogLines: countLines(`${root}/${logPath}`),
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
