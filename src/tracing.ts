// Traces (OpenTelemetry), off unless an OTLP endpoint is named: the shape every layer holds. The SDK behind it
// (src/tracing-sdk.ts) is imported by src/service.ts only when tracing is on, so a service without an endpoint loads
// none of it and pays one `undefined` check per request, statement and call out. The tracer is owned by the process state built in
// src/service.ts and flushed when it stops; nothing is registered globally (no global tracer provider, context manager
// or propagator), so several services in one process (the tests) each trace on their own.
import type { IncomingHttpHeaders } from 'node:http';
import type { TraceFields } from './log.js';

/** What a request was, told to its server span when it ends. */
export interface RequestOutcome {
  /** The route template that answered it (`/checkout_sessions/{id}`), or undefined when no route serves the path. */
  route: string | undefined;
  operationId: string | undefined;
  path: string;
  status: number;
  /** Refused by a rate limiter (a 429). */
  rateLimited: boolean;
  /** Answered from the idempotency store: the first request's answer, again. */
  replayed: boolean;
  /** Answered while the instance drains. */
  drained: boolean;
  /** What the request threw when it was not answered in its surface's shape (a 5xx). */
  error?: unknown;
}

/** A span this service started. */
export interface TraceSpan {
  /** The trace's id, 32 lowercase hex digits. */
  readonly traceId: string;
  setAttribute(name: string, value: string | number | boolean): void;
  /** Ends the span, failed with `error` when one is given. */
  end(error?: unknown): void;
}

/** A request's server span. */
export interface RequestSpan extends TraceSpan {
  /** Names the span by its route and sets the HTTP attributes, then ends it. */
  finish(outcome: RequestOutcome): void;
}

/** Where a span is: kept by work that will be done later on its behalf (a batched statement links to it). */
export type SpanLink = { readonly spanLink: unique symbol };

export interface SpanOptions {
  kind: 'client' | 'internal';
  attributes?: Record<string, string | number | boolean>;
  /** The spans this one serves (a batched statement: every request it carries). */
  links?: SpanLink[];
  /**
   * The root of a trace of its own, whatever span is active: background work, or a statement that serves several
   * requests (linked to each). Otherwise the span is the active span's child, and is not started when none is active.
   */
  root?: boolean;
}

export interface Tracing {
  /** A request's server span: the child of the caller's `traceparent` (and `tracestate`) when they are valid. */
  startRequest(method: string, headers: IncomingHttpHeaders): RequestSpan;
  /** Runs `fn` with `span` active: the spans started meanwhile (statements, calls out) are its children. */
  within<T>(span: TraceSpan, fn: () => T): T;
  /** A child of the active span, or a root (`options.root`); undefined when no span is active and it is no root. */
  startSpan(name: string, options: SpanOptions): TraceSpan | undefined;
  /** The active span, to link to later; undefined when none. */
  activeLink(): SpanLink | undefined;
  /** The span a W3C `traceparent` names (one this service sent and stored), to link to; undefined when invalid. */
  linkTo(traceparent: string): SpanLink | undefined;
  /** `traceparent` and `tracestate` of the active span, for a call out; empty when none is active. */
  outboundHeaders(): Record<string, string>;
  /** `trace_id` and `span_id` of the active span, for the log line being written. */
  logFields: TraceFields;
  /** Exports every ended span now. */
  forceFlush(): Promise<void>;
  /** Exports what is left and stops. */
  shutdown(): Promise<void>;
}

/** Whether the variables name an OTLP endpoint for traces (and the SDK is not switched off). */
export function tracingEnabled(otel: Readonly<Record<string, string>>): boolean {
  if (otel.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return false;
  if (otel.OTEL_TRACES_EXPORTER !== undefined && otel.OTEL_TRACES_EXPORTER !== 'otlp') return false;
  return Boolean(otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? otel.OTEL_EXPORTER_OTLP_ENDPOINT);
}
