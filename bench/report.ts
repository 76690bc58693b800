// Targets of issue #7, the verdict of each measured row against them, and the table (Markdown, so it pastes into the
// README) and JSON file they are reported in.
import type { Measurement } from './load.js';
import type { RowKind } from './rows.js';

const MB = 1_000_000;

interface Targets {
  /** Service requests/s over ceiling requests/s, at least. */
  minRatio?: number;
  maxP99Ms: number;
}

// Only catalogue reads and session creation have a ratio target; reading a session back has the reads' p99 target.
const TARGETS: Record<RowKind, Targets> = {
  'catalog-read': { minRatio: 0.7, maxP99Ms: 50 },
  read: { maxP99Ms: 50 },
  creation: { minRatio: 0.25, maxP99Ms: 100 },
};
export const MAX_PEAK_RSS_BYTES = 200 * MB;

export interface Check {
  value: number;
  limit: number;
  pass: boolean;
}

export interface MeasuredRow {
  state: 'measured';
  title: string;
  kind: RowKind;
  request: { method: string; url: string };
  service: Measurement;
  ceiling: Measurement;
  /** Peak RSS of the service during this row (warm-up included). */
  servicePeakRssBytes: number;
  ratio: number;
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
    smoke: boolean;
    database: 'given' | 'fresh' | 'embedded';
  };
  rows: ReportRow[];
  peakRss: { serviceBytes: number; ceilingBytes: number; check: Check };
  /** Lines the service wrote (it logs at warn and above) during the run. */
  serviceLogLines: number;
}

function atMost(value: number, limit: number): Check {
  return { value, limit, pass: value <= limit };
}

function atLeast(value: number, limit: number): Check {
  return { value, limit, pass: value >= limit };
}

export function judgeRow(
  base: { title: string; kind: RowKind; request: { method: string; url: string } },
  service: Measurement,
  ceiling: Measurement,
  servicePeakRssBytes: number,
): MeasuredRow {
  const targets = TARGETS[base.kind];
  const ratio = service.requestsPerSecond / ceiling.requestsPerSecond;
  const checks = {
    ...(targets.minRatio === undefined ? {} : { ratio: atLeast(ratio, targets.minRatio) }),
    p99Ms: atMost(service.p99Ms, targets.maxP99Ms),
    errors: atMost(service.non2xx + service.errors, 0),
    peakRssBytes: atMost(servicePeakRssBytes, MAX_PEAK_RSS_BYTES),
  };
  const pass = Object.values(checks).every((check) => check.pass);
  return { state: 'measured', ...base, service, ceiling, servicePeakRssBytes, ratio, checks, pass };
}

export function judgePeakRss(serviceBytes: number, ceilingBytes: number): Report['peakRss'] {
  return { serviceBytes, ceilingBytes, check: atMost(serviceBytes, MAX_PEAK_RSS_BYTES) };
}

const verdict = (check: Check) => (check.pass ? 'PASS' : 'FAIL');
const integer = (value: number) => Math.round(value).toLocaleString('en-US');
const megabytes = (bytes: number) => `${Math.round(bytes / MB)} MB`;

function measuredCells(row: MeasuredRow): string[] {
  const { service, ceiling, checks } = row;
  const ratio = checks.ratio
    ? `${row.ratio.toFixed(2)} ${verdict(checks.ratio)} (≥ ${checks.ratio.limit})`
    : `${row.ratio.toFixed(2)} (no target)`;
  const errors = service.non2xx + service.errors;
  return [
    row.title,
    integer(service.requestsPerSecond),
    integer(ceiling.requestsPerSecond),
    ratio,
    `${service.p50Ms} / ${ceiling.p50Ms}`,
    `${service.p99Ms} / ${ceiling.p99Ms} ${verdict(checks.p99Ms)} (≤ ${checks.p99Ms.limit})`,
    `${service.cpuMsPerRequest.toFixed(2)} / ${ceiling.cpuMsPerRequest.toFixed(2)}`,
    `${errors} ${verdict(checks.errors)}`,
    `${megabytes(row.servicePeakRssBytes)} ${verdict(checks.peakRssBytes)}`,
    row.pass ? 'PASS' : 'FAIL',
  ];
}

const HEADER = [
  'Request',
  'Service req/s',
  'Ceiling req/s',
  'Ratio',
  'p50 ms (svc / ceil)',
  'p99 ms (svc / ceil)',
  'CPU ms/req (svc / ceil)',
  'Errors',
  'Service peak RSS',
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

export function formatReport(report: Report, resultsPath: string, logPath: string): string {
  const { settings, machine, peakRss } = report;
  const lines = [
    markdownTable([HEADER, ...report.rows.map(cells)]),
    '',
    `Service peak RSS over the whole run: ${megabytes(peakRss.serviceBytes)} ${verdict(peakRss.check)} (≤ ${megabytes(peakRss.check.limit)}); ceiling server: ${megabytes(peakRss.ceilingBytes)}.`,
    `${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per run${settings.smoke ? ' (smoke: figures not meaningful)' : ''}; ` +
      `${settings.database === 'embedded' ? 'embedded PGlite (a copy of ./.data)' : `${settings.database} PostgreSQL`} database; Node ${machine.node}, ${machine.cpus} × ${machine.cpuModel}, load average ${machine.loadAverageAtStart.toFixed(1)} at start. Results: ${resultsPath}`,
  ];
  if (report.serviceLogLines > 0)
    lines.push(`The service logged ${report.serviceLogLines} lines at warn or above: ${logPath}`);
  return lines.join('\n');
}
