// Targets of issues #7 and #15, the verdict of each measured row against them, and the table (Markdown, so it pastes
// into docs/performance) and JSON file they are reported in. Each row is measured in several interleaved rounds
// (every row's service run and ceiling run, then the next round), and judged on the median of its per-round ratios:
// the machine is shared, so a ratio taken within one round is the figure to trust.
import type { Measurement } from './load.js';
import type { RowKind } from './rows.js';
import { formatStalls, type StallRow } from './stalls.js';
import { MAX_IDLE_RSS_BYTES, MAX_START_MS, type Start } from './startup.js';

const MB = 1_000_000;

interface Targets {
  /** Service requests/s over ceiling requests/s (median over the rounds), at least. */
  minRatio: number;
  maxP99Ms: number;
}

const TARGETS: Record<RowKind, Targets> = {
  'catalog-read': { minRatio: 0.7, maxP99Ms: 50 },
  // Against the cached read of the same list: each miss is one statement and a serialisation (issue #29).
  'catalog-miss': { minRatio: 0.05, maxP99Ms: 100 },
  // Issue #30 item 7: the session read at 0.7 of its pgbench replay, REST creates at 0.8 and the protocols' at 0.7 of
  // pgbench storing the same session.
  read: { minRatio: 0.7, maxP99Ms: 50 },
  'rest-creation': { minRatio: 0.8, maxP99Ms: 100 },
  creation: { minRatio: 0.7, maxP99Ms: 100 },
  mcp: { minRatio: 0.5, maxP99Ms: 50 },
};
export const MAX_PEAK_RSS_BYTES = 200 * MB;

export interface Check {
  value: number;
  limit: number;
  pass: boolean;
}

/** A ceiling's figures in one round (pgbench reports no percentiles and no CPU per transaction). */
export interface CeilingFigures {
  requestsPerSecond: number;
  p99Ms?: number;
  cpuMsPerRequest?: number;
  errors: number;
}

export interface Round {
  service: Measurement;
  /** Absent when the ceiling cannot be measured here (pgbench on the embedded database). */
  ceiling?: CeilingFigures;
  ratio?: number;
  /**
   * Bare Koa setting every header the service's response carries too (catalogue reads): the same response, headers and
   * all. Not judged: it shows what the headers the contract requires cost this stack, beside the judged ceiling.
   */
  withHeaders?: CeilingFigures;
  ratioWithHeaders?: number;
  /** Peak RSS of the service during this row (warm-up included). */
  servicePeakRssBytes: number;
  /** 1-minute load average as the row started. */
  loadAverage: number;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface MeasuredRow {
  state: 'measured';
  title: string;
  kind: RowKind;
  request: { method: string; url: string };
  ceilingName: string;
  rounds: Round[];
  summary: {
    serviceRequestsPerSecond: Spread;
    ceilingRequestsPerSecond?: Spread;
    ratio?: Spread;
    ratioWithHeaders?: Spread;
    cpuMs: Spread;
    databaseCpuMs?: Spread;
  };
  checks: { ratio?: Check; p99Ms: Check; errors: Check; peakRssBytes: Check };
  pass: boolean;
}

export interface SkippedRow {
  state: 'unavailable';
  title: string;
  kind: RowKind;
  reason: string;
}

export type ReportRow = MeasuredRow | SkippedRow;

export interface Report {
  date: string;
  machine: {
    cpus: number;
    cpuModel: string;
    node: string;
    totalMemoryBytes: number;
    /** 1-minute load average before the run: well above 0 means other processes competed for the cores. */
    loadAverageAtStart: number;
  };
  settings: {
    connections: number;
    warmupSeconds: number;
    durationSeconds: number;
    rounds: number;
    smoke: boolean;
    /** What of the service's telemetry was on (bench/run.ts --telemetry). */
    telemetry: 'off' | 'metrics' | 'tracing';
    database: 'given' | 'fresh' | 'embedded';
  };
  rows: ReportRow[];
  /** The longest event-loop stalls under the worst input the limits allow (bench/stalls.ts). */
  stalls: StallRow[];
  /** The service's RSS once started and answering, before any load. */
  serviceIdleRssBytes: number;
  peakRss: { serviceBytes: number; ceilingBytes: number; check: Check };
  /** Lines the service wrote (it logs at warn and above) during the run. */
  serviceLogLines: number;
  /** Issue #30 item 6: fresh `npm start`s on the embedded default (bench/startup.ts); absent with --starts 0. */
  startup?: StartupFigures;
}

export interface StartupFigures {
  starts: Start[];
  summary: { startMs: Spread; serviceCpuMs: Spread; idleRssBytes: Spread };
  /** The median start, and the largest idle RSS of the starts. */
  checks: { startMs: Check; idleRssBytes: Check };
  pass: boolean;
}

function atMost(value: number, limit: number): Check {
  return { value, limit, pass: value <= limit };
}

function atLeast(value: number, limit: number): Check {
  return { value, limit, pass: value >= limit };
}

export function spread(values: number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted[sorted.length - 1]! };
}

export function judgeRow(
  base: { title: string; kind: RowKind; request: { method: string; url: string }; ceilingName: string },
  rounds: Round[],
): MeasuredRow {
  const targets = TARGETS[base.kind];
  const ratios = rounds.flatMap((round) => (round.ratio === undefined ? [] : [round.ratio]));
  const databaseCpu = rounds.flatMap(({ service }) =>
    service.databaseCpuMsPerRequest === undefined ? [] : [service.databaseCpuMsPerRequest],
  );
  const ceilings = rounds.flatMap((round) => (round.ceiling ? [round.ceiling.requestsPerSecond] : []));
  const withHeaders = rounds.flatMap((round) => (round.ratioWithHeaders === undefined ? [] : [round.ratioWithHeaders]));
  const summary = {
    serviceRequestsPerSecond: spread(rounds.map((round) => round.service.requestsPerSecond)),
    ...(ceilings.length ? { ceilingRequestsPerSecond: spread(ceilings) } : {}),
    ...(ratios.length ? { ratio: spread(ratios) } : {}),
    ...(withHeaders.length ? { ratioWithHeaders: spread(withHeaders) } : {}),
    cpuMs: spread(rounds.map((round) => round.service.cpuMsPerRequest)),
    ...(databaseCpu.length ? { databaseCpuMs: spread(databaseCpu) } : {}),
  };
  const checks = {
    ...(summary.ratio ? { ratio: atLeast(summary.ratio.median, targets.minRatio) } : {}),
    p99Ms: atMost(Math.max(...rounds.map((round) => round.service.p99Ms)), targets.maxP99Ms),
    errors: atMost(
      rounds.reduce((sum, round) => sum + round.service.non2xx + round.service.errors, 0),
      0,
    ),
    peakRssBytes: atMost(Math.max(...rounds.map((round) => round.servicePeakRssBytes)), MAX_PEAK_RSS_BYTES),
  };
  const pass = Object.values(checks).every((check) => check.pass);
  return { state: 'measured', ...base, rounds, summary, checks, pass };
}

export function judgePeakRss(serviceBytes: number, ceilingBytes: number): Report['peakRss'] {
  return { serviceBytes, ceilingBytes, check: atMost(serviceBytes, MAX_PEAK_RSS_BYTES) };
}

export function judgeStarts(starts: Start[]): StartupFigures {
  const summary = {
    startMs: spread(starts.map((start) => start.startMs)),
    serviceCpuMs: spread(starts.map((start) => start.serviceCpuMs)),
    idleRssBytes: spread(starts.map((start) => start.idleRssBytes)),
  };
  const checks = {
    startMs: atMost(summary.startMs.median, MAX_START_MS),
    idleRssBytes: atMost(summary.idleRssBytes.max, MAX_IDLE_RSS_BYTES),
  };
  return { starts, summary, checks, pass: checks.startMs.pass && checks.idleRssBytes.pass };
}

const verdict = (check: Check) => (check.pass ? 'PASS' : 'FAIL');
const integer = (value: number) => Math.round(value).toLocaleString('en-US');
const megabytes = (bytes: number) => `${Math.round(bytes / MB)} MB`;
const ranged = (figures: Spread, format: (value: number) => string) =>
  `${format(figures.median)} (${format(figures.min)}–${format(figures.max)})`;
const twoDecimals = (value: number) => value.toFixed(2);

function measuredCells(row: MeasuredRow): string[] {
  const { summary, checks } = row;
  const ratio = summary.ratio
    ? `${ranged(summary.ratio, twoDecimals)} ${verdict(checks.ratio!)} (≥ ${checks.ratio!.limit})`
    : '–';
  return [
    row.title,
    row.ceilingName,
    ranged(summary.serviceRequestsPerSecond, integer),
    summary.ceilingRequestsPerSecond ? ranged(summary.ceilingRequestsPerSecond, integer) : '–',
    row.rounds.map((round) => (round.ratio === undefined ? '–' : twoDecimals(round.ratio))).join(', '),
    ratio,
    summary.ratioWithHeaders ? ranged(summary.ratioWithHeaders, twoDecimals) : '–',
    `${checks.p99Ms.value} ${verdict(checks.p99Ms)} (≤ ${checks.p99Ms.limit})`,
    twoDecimals(summary.cpuMs.median),
    summary.databaseCpuMs ? twoDecimals(summary.databaseCpuMs.median) : '–',
    `${checks.errors.value} ${verdict(checks.errors)}`,
    `${megabytes(checks.peakRssBytes.value)} ${verdict(checks.peakRssBytes)}`,
    row.rounds.map((round) => round.loadAverage.toFixed(1)).join(', '),
    row.pass ? 'PASS' : 'FAIL',
  ];
}

const HEADER = [
  'Request',
  'Ceiling',
  'Service req/s, median (min–max)',
  'Ceiling req/s',
  'Ratio per round',
  'Ratio, median (min–max)',
  'Ratio to bare Koa with the same headers (not judged)',
  'Worst p99 ms',
  'Service CPU ms/req',
  'PostgreSQL CPU ms/req',
  'Errors',
  'Service peak RSS',
  'Load average per round',
  'Result',
];

function cells(row: ReportRow): string[] {
  if (row.state === 'measured') return measuredCells(row);
  return [row.title, ...HEADER.slice(1, -1).map(() => '–'), `unavailable: ${row.reason}`];
}

function markdownTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((cellsOfRow) => cellsOfRow[column]!.length)));
  const line = (cellsOfRow: string[]) =>
    `| ${cellsOfRow.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

/** The rows as the table every bench prints. */
export function formatRows(rows: ReportRow[]): string {
  return markdownTable([HEADER, ...rows.map(cells)]);
}

const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(2)} s`;

/** One line for the starts: wall time and idle RSS judged, the service's CPU beside them (the load cannot stretch it). */
export function formatStartup(startup: StartupFigures): string {
  const { starts, summary, checks } = startup;
  const each = starts
    .map(
      (start) => `${seconds(start.startMs)} / ${megabytes(start.idleRssBytes)} (load ${start.loadAverage.toFixed(1)})`,
    )
    .join(', ');
  return (
    `npm start to the first 200 on /healthz, embedded default, ${starts.length} fresh start(s): median ` +
    `${seconds(summary.startMs.median)} ${verdict(checks.startMs)} (≤ ${seconds(checks.startMs.limit)}), service CPU ` +
    `${seconds(summary.serviceCpuMs.median)}; idle RSS at most ${megabytes(summary.idleRssBytes.max)} ` +
    `${verdict(checks.idleRssBytes)} (≤ ${megabytes(checks.idleRssBytes.limit)}). Each: ${each}.`
  );
}

export function formatReport(report: Report, resultsPath: string, logPath: string): string {
  const { settings, machine, peakRss } = report;
  const lines = [
    ...(report.startup ? [formatStartup(report.startup), ''] : []),
    formatRows(report.rows),
    '',
    ...(report.stalls.length ? [formatStalls(report.stalls), ''] : []),
    `Service RSS idle ${megabytes(report.serviceIdleRssBytes)}; peak over the whole run: ${megabytes(peakRss.serviceBytes)} ${verdict(peakRss.check)} (≤ ${megabytes(peakRss.check.limit)}); ceiling server: ${megabytes(peakRss.ceilingBytes)}.`,
    `${settings.rounds} interleaved round(s), ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per run${settings.smoke ? ' (smoke: figures not meaningful)' : ''}; telemetry ${settings.telemetry}; ` +
      `${settings.database === 'embedded' ? 'embedded PGlite (a copy of ./.data)' : `${settings.database} PostgreSQL`} database; Node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, load average ${machine.loadAverageAtStart.toFixed(1)} at start. Results: ${resultsPath}`,
  ];
  if (report.serviceLogLines > 0)
    lines.push(`The service logged ${report.serviceLogLines} lines at warn or above: ${logPath}`);
  return lines.join('\n');
}
