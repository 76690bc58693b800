// The telemetry cost as CPU per request (issue #34), read steadily on a busy machine: three services on one database,
// telemetry off, metrics on, and tracing on (every span exported over OTLP/HTTP to a sink that discards it), each row
// loaded on each service in turn for a short run, round after round (the order reversed every other round), so that
// the three meet the same moments of the machine's load. Service CPU ms per request (from /proc, summed over the
// rounds) is the figure to read; requests per second are printed beside it. `--also <dir>` measures another build (a
// checkout with its dist/ built, e.g. the commit before a change) beside this one, interleaved the same way.
//   npx tsx bench/telemetry-cpu.ts [--only TEXT] [--rounds 3] [--duration 5] [--warmup 2] [--connections 32]
//                                  [--settings off,metrics,tracing,unsampled] [--also <dir>,…]
//                                  [--cpu-prof] (a V8 profile of each service in bench/profiles/)
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { positiveNumber } from './arguments.js';
import { openDatabase } from './database.js';
import { measure } from './load.js';
import { startServiceProcess, type ServerProcess } from './processes.js';
import { percent, telemetryRows, telemetrySettings } from './telemetry-settings.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    settings: { type: 'string', default: 'off,metrics,tracing' },
    /** Other builds to measure beside this one (each a checkout with its dist/ built), interleaved with it. */
    also: { type: 'string' },
  },
});
const rounds = positiveNumber(values.rounds, 3, 'rounds');
const settings = {
  connections: positiveNumber(values.connections, 32, 'connections'),
  warmupSeconds: positiveNumber(values.warmup, 2, 'warmup'),
  durationSeconds: positiveNumber(values.duration, 5, 'duration'),
};

const telemetry = await telemetrySettings();
const database = await openDatabase(process.env.DATABASE_URL?.trim() || undefined);
const profiles = `${root}/bench/profiles`;
if (values['cpu-prof']) mkdirSync(profiles, { recursive: true });
const services: Array<[string, ServerProcess]> = [];
try {
  const roots = [root, ...(values.also?.split(',').filter(Boolean) ?? [])];
  for (const [index, build] of roots.entries())
    for (const name of values.settings.split(',')) {
      services.push([
        roots.length > 1 ? `${index === 0 ? 'this' : `also${index}`} ${name}` : name,
        await startServiceProcess({
          root: build,
          databaseEnv: database.env,
          logFile: `${root}/bench/telemetry-${index}-${name}.log`,
          cpuProfileDir: values['cpu-prof'] ? profiles : undefined,
          env: { BASE_URL: 'https://shop.example.com', ...(await telemetry.envOf(name)) },
        }),
      ]);
    }
  const rows = await telemetryRows(services[0]![1].url, values.only);
  const figures = new Map<string, { cpu: number[]; rps: number[]; cpuMs: number; requests: number }>();
  // Each service warmed up once per row; then the rounds are short and many, each service in turn, so that all meet
  // the same moments of the machine's load: the CPU per request of a setting is its total over the rounds.
  for (const row of rows) for (const [, service] of services) await measure(service, row.load, settings);
  const short = { ...settings, warmupSeconds: 0 };
  for (let round = 1; round <= rounds; round++) {
    for (const row of rows) {
      for (const [name, service] of round % 2 ? services : [...services].reverse()) {
        const measured = await measure(service, row.load, short);
        const key = `${row.title}\t${name}`;
        const entry = figures.get(key) ?? { cpu: [], rps: [], cpuMs: 0, requests: 0 };
        entry.cpuMs += measured.cpuMsPerRequest * measured.requests;
        entry.requests += measured.requests;
        entry.cpu.push(measured.cpuMsPerRequest);
        entry.rps.push(measured.requestsPerSecond);
        figures.set(key, entry);
        console.log(
          `round ${round} ${row.title} [${name}]: ${measured.cpuMsPerRequest.toFixed(3)} CPU ms/req, ` +
            `${Math.round(measured.requestsPerSecond)} req/s, ${measured.non2xx + measured.errors} non-2xx/errors, ` +
            `load ${loadavg()[0]!.toFixed(1)}`,
        );
      }
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  console.log('\nrow\tsetting\tCPU ms/req over all rounds\tCPU ms/req median of rounds\treq/s median');
  for (const [key, { cpu, rps, cpuMs, requests }] of figures) {
    console.log(`${key}\t${(cpuMs / requests).toFixed(3)}\t${median(cpu).toFixed(3)}\t${Math.round(median(rps))}`);
  }
  // The cost of each setting against `off` of the same build: throughput, the median over rounds of each round's ratio
  // (the settings of a round met the same moments of the machine), and CPU per request over all rounds.
  const builds = [...new Set(services.map(([name]) => name.replace(/\s*\S+$/, '')))];
  const others = values.settings.split(',').filter((name) => name !== 'off');
  if (values.settings.split(',').includes('off') && others.length > 0) {
    console.log(
      `\nCost against off (Node.js ${process.versions.node} for the load; service: ${process.env.BENCH_SERVICE_NODE?.trim() || 'the same'})`,
    );
    console.log(['row', ...others.flatMap((name) => [`${name} req/s`, `${name} CPU/req`])].join('\t'));
    for (const row of rows)
      for (const build of builds) {
        const at = (setting: string) => figures.get(`${row.title}\t${build ? `${build} ` : ''}${setting}`)!;
        const off = at('off');
        const cells = others.flatMap((name) => {
          const entry = at(name);
          const ratios = entry.rps.map((rps, round) => rps / off.rps[round]! - 1);
          return [percent(median(ratios)), percent(entry.cpuMs / entry.requests / (off.cpuMs / off.requests) - 1)];
        });
        console.log([`${row.title}${build ? ` [${build}]` : ''}`, ...cells].join('\t'));
      }
  }
} finally {
  for (const [, service] of services) await service.stop();
  await database.drop();
  telemetry.close();
}
