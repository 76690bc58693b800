// The telemetry settings a service is benchmarked with (issue #34), shared by bench/telemetry-cpu.ts and
// bench/instructions.ts: off; metrics on (the listener of its own); tracing on with every span sampled and exported
// over OTLP/HTTP to a sink in the bench process that discards it; and tracing on with nothing sampled.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from './processes.js';
import { prepareRows, type ReadyRow } from './rows.js';

export const TELEMETRY_SETTINGS = ['off', 'metrics', 'tracing', 'unsampled'] as const;

export interface TelemetrySettings {
  /** The service's environment for a setting; throws naming the settings for any other name. */
  envOf(name: string): Promise<Record<string, string>>;
  close(): void;
}

export async function telemetrySettings(): Promise<TelemetrySettings> {
  // Answers each export as a collector does: an empty success in the request's own encoding.
  const sink = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const protobuf = request.headers['content-type'] === 'application/x-protobuf';
      response.writeHead(200, { 'Content-Type': protobuf ? 'application/x-protobuf' : 'application/json' });
      response.end(protobuf ? undefined : '{}');
    });
  });
  sink.listen(0, '127.0.0.1');
  await once(sink, 'listening');
  const endpoint = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
  const metrics = async () => ({ METRICS_PORT: String(await freePort()), METRICS_HOST: '127.0.0.1' });
  const tracing = async (sampler: string) => ({
    ...(await metrics()),
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_TRACES_SAMPLER: sampler,
    OTEL_SERVICE_NAME: 'storefront-bench',
  });
  const byName: Record<(typeof TELEMETRY_SETTINGS)[number], () => Promise<Record<string, string>>> = {
    off: async () => ({}),
    metrics,
    tracing: () => tracing('always_on'),
    // What the context and a non-recording span cost without any export.
    unsampled: () => tracing('always_off'),
  };
  return {
    envOf(name) {
      const env = byName[name as (typeof TELEMETRY_SETTINGS)[number]];
      if (!env) throw new Error(`a telemetry setting is one of ${TELEMETRY_SETTINGS.join(', ')}, not ${name}`);
      return env();
    },
    close: () => sink.close(),
  };
}

/**
 * The rows telemetry is measured on: every ready row but the catalogue misses (no UCP platform profile is served, so
 * UCP's row is unavailable), or those whose title contains `only`.
 */
export async function telemetryRows(baseUrl: string, only: string | undefined): Promise<ReadyRow[]> {
  return (await prepareRows(baseUrl, { ucpProfileUrl: 'http://127.0.0.1:1/none' })).filter(
    (row): row is ReadyRow =>
      row.state === 'ready' && row.kind !== 'catalog-miss' && (!only || row.title.includes(only)),
  );
}

/** A cost as a signed percentage: 0.031 -> `+3.1 %`. */
export const percent = (ratio: number) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)} %`;
