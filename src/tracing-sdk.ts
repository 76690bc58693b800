// The OpenTelemetry SDK behind src/tracing.ts, loaded only when tracing is on. Configured by the standard variables:
// the OTLP/HTTP exporter's endpoint and headers, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER
// and its argument; the batch span processor reads its own OTEL_BSP_* variables. The active span of each request is
// kept in an AsyncLocalStorage of this tracer's own, and W3C Trace Context is read and written by the SDK's propagator.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingHttpHeaders } from 'node:http';
import {
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVICE_NAME,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { RequestOutcome, RequestSpan, SpanLink, SpanOptions, TraceSpan, Tracing } from './tracing.js';

type Otel = Readonly<Record<string, string>>;

/** The methods HTTP semantic conventions name; any other is `_OTHER` (a client may send any token). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'CONNECT', 'TRACE']);

/** `key=value,key=value`, each part percent-encoded (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS). */
function keyValues(list: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const part of list?.split(',') ?? []) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    try {
      pairs[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      // A part that is not valid percent-encoding is skipped, as the SDK's own parser does.
    }
  }
  return pairs;
}

function ratio(otel: Otel): number {
  const value = Number(otel.OTEL_TRACES_SAMPLER_ARG ?? '1');
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value : 1;
}

/** OTEL_TRACES_SAMPLER (default parentbased_always_on, as the specification says). */
function sampler(otel: Otel): Sampler {
  switch (otel.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio(otel));
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio(otel)) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else OTEL_EXPORTER_OTLP_ENDPOINT with the signal's path. */
function tracesUrl(otel: Otel): string {
  if (otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return otel.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  return `${otel.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` or `http/json`. Unset, `http/json`
 * (the JavaScript SDK's OTLP/HTTP exporter's own encoding, which every collector's OTLP/HTTP receiver takes); `grpc` is
 * not offered (a gRPC stack for one exporter) and, like any other value, means the default.
 */
function tracesProtocol(otel: Otel): 'http/protobuf' | 'http/json' {
  const protocol = (otel.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? otel.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  return protocol === 'http/protobuf' ? 'http/protobuf' : 'http/json';
}

/** Our handle on an SDK span. */
class Handle implements RequestSpan {
  constructor(
    readonly span: Span,
    readonly method: string,
  ) {}
  get traceId(): string {
    return this.span.spanContext().traceId;
  }
  setAttribute(name: string, value: string | number | boolean): void {
    this.span.setAttribute(name, value);
  }
  end(error?: unknown): void {
    if (error !== undefined) {
      this.span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.name : 'error');
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : undefined });
    }
    this.span.end();
  }
  finish(outcome: RequestOutcome): void {
    const { span } = this;
    if (outcome.route !== undefined) {
      span.updateName(`${this.method} ${outcome.route}`);
      span.setAttribute(ATTR_HTTP_ROUTE, outcome.route);
    }
    if (outcome.operationId !== undefined) span.setAttribute('storefront.operation_id', outcome.operationId);
    span.setAttribute(ATTR_URL_PATH, outcome.path);
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
    if (outcome.rateLimited) span.setAttribute('storefront.rate_limited', true);
    if (outcome.replayed) span.setAttribute('storefront.idempotent_replay', true);
    if (outcome.drained) span.setAttribute('storefront.draining', true);
    if (outcome.status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(outcome.status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    this.end(outcome.error);
  }
}

export function createTracing(otel: Otel): Tracing {
  const attributes = keyValues(otel.OTEL_RESOURCE_ATTRIBUTES);
  const resource = resourceFromAttributes({
    ...attributes,
    [ATTR_SERVICE_NAME]: otel.OTEL_SERVICE_NAME ?? attributes[ATTR_SERVICE_NAME] ?? 'storefront',
  });
  const exporterOptions = {
    url: tracesUrl(otel),
    headers: keyValues(otel.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? otel.OTEL_EXPORTER_OTLP_HEADERS),
  };
  const exporter =
    tracesProtocol(otel) === 'http/protobuf'
      ? new OtlpProtobufExporter(exporterOptions)
      : new OtlpJsonExporter(exporterOptions);
  const provider = new BasicTracerProvider({
    resource,
    sampler: sampler(otel),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('storefront');
  const propagator = new W3CTraceContextPropagator();
  const active = new AsyncLocalStorage<Context>();
  const current = () => active.getStore() ?? ROOT_CONTEXT;
  const links = new WeakMap<SpanLink, Link>();

  return {
    startRequest(method: string, headers: IncomingHttpHeaders): RequestSpan {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const known = KNOWN_METHODS.has(method) ? method : '_OTHER';
      const span = tracer.startSpan(
        known === '_OTHER' ? 'HTTP' : known,
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: known } },
        parent,
      );
      return new Handle(span, known === '_OTHER' ? 'HTTP' : known);
    },
    within<T>(span: TraceSpan, fn: () => T): T {
      return active.run(trace.setSpan(current(), (span as Handle).span), fn);
    },
    startSpan(name: string, options: SpanOptions): TraceSpan | undefined {
      const parent = options.root ? ROOT_CONTEXT : current();
      if (!options.root && trace.getSpan(parent) === undefined) return undefined;
      const span = tracer.startSpan(
        name,
        {
          kind: options.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
          attributes: options.attributes,
          links: options.links?.flatMap((link) => links.get(link) ?? []),
        },
        parent,
      );
      return new Handle(span, '');
    },
    activeLink(): SpanLink | undefined {
      const span = trace.getSpan(current());
      if (!span) return undefined;
      const link = {} as SpanLink;
      links.set(link, { context: span.spanContext() });
      return link;
    },
    linkTo(traceparent: string): SpanLink | undefined {
      const span = trace.getSpan(propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter));
      if (!span) return undefined;
      const link = {} as SpanLink;
      links.set(link, { context: span.spanContext() });
      return link;
    },
    outboundHeaders(): Record<string, string> {
      const headers: Record<string, string> = {};
      propagator.inject(current(), headers, defaultTextMapSetter);
      return headers;
    },
    logFields() {
      const span = trace.getSpan(current());
      if (!span) return undefined;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },
    forceFlush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
