// A local OTLP/HTTP trace receiver, as a collector would be: it accepts POST /v1/traces in OTLP's JSON encoding
// (`http/json`, what @opentelemetry/exporter-trace-otlp-http sends) and in its protobuf encoding (`http/protobuf`,
// @opentelemetry/exporter-trace-otlp-proto), decoded with protobufjs from the fields of opentelemetry-proto's
// trace.proto this test support reads, and keeps every span, flattened, with its resource's attributes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

export type AttributeValue = string | number | boolean | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  links: Array<{ traceId: string; spanId: string }>;
  /** 2: error. */
  status: number | undefined;
  resource: Record<string, AttributeValue>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** How many exports arrived in the protobuf encoding (`application/x-protobuf`). */
  readonly protobufRequests: number;
  /** Resolves once a span matches (generous limit: the machine may be loaded); throws naming what arrived otherwise. */
  waitForSpan(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>;
  close(): Promise<void>;
}

interface OtlpKeyValue {
  key: string;
  value: { stringValue?: string; intValue?: number | string; doubleValue?: number; boolValue?: boolean };
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries(
    (list ?? []).map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
        value.doubleValue ??
        value.boolValue,
    ]),
  );
}

// opentelemetry-proto v1 (collector/trace/v1/trace_service.proto, trace/v1/trace.proto, common/v1/common.proto,
// resource/v1/resource.proto): the messages and field numbers a span's reading needs; protobufjs skips the others.
const OTLP = protobuf.Root.fromJSON({
  nested: {
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
    ResourceSpans: {
      fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } },
    },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 },
        spanId: { type: 'bytes', id: 2 },
        parentSpanId: { type: 'bytes', id: 4 },
        name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
        links: { rule: 'repeated', type: 'Link', id: 13 },
        status: { type: 'Status', id: 15 },
      },
    },
    Link: { fields: { traceId: { type: 'bytes', id: 1 }, spanId: { type: 'bytes', id: 2 } } },
    Status: { fields: { code: { type: 'int32', id: 3 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    AnyValue: {
      fields: {
        stringValue: { type: 'string', id: 1 },
        boolValue: { type: 'bool', id: 2 },
        intValue: { type: 'int64', id: 3 },
        doubleValue: { type: 'double', id: 4 },
      },
    },
  },
}).lookupType('ExportTraceServiceRequest');

/** A protobuf request as the JSON encoding spells it: ids in hex, int64 as numbers, absent fields absent. */
function fromProtobuf(bytes: Buffer): { resourceSpans?: any[] } {
  const hex = (value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('hex') : value);
  const message = OTLP.toObject(OTLP.decode(bytes), { longs: Number, defaults: false });
  for (const resourceSpans of message.resourceSpans ?? [])
    for (const scope of resourceSpans.scopeSpans ?? [])
      for (const span of scope.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
        for (const link of span.links ?? [])
          Object.assign(link, { traceId: hex(link.traceId), spanId: hex(link.spanId) });
      }
  return message;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let protobufRequests = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      const bytes = Buffer.concat(chunks);
      const type = request.headers['content-type'] ?? '';
      if (type === 'application/x-protobuf') protobufRequests++;
      const body =
        type === 'application/x-protobuf'
          ? fromProtobuf(bytes)
          : (JSON.parse(bytes.toString('utf8')) as { resourceSpans?: any[] });
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes);
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: attributesOf(span.attributes),
              links: (span.links ?? []).map((link: any) => ({ traceId: link.traceId, spanId: link.spanId })),
              status: span.status?.code,
              resource,
            });
          }
        }
      }
      // An empty ExportTraceServiceResponse, in the request's encoding.
      if (type === 'application/x-protobuf') response.writeHead(200, { 'Content-Type': type }).end();
      else response.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get protobufRequests() {
      return protobufRequests;
    },
    async waitForSpan(match, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = spans.find(match);
        if (found) return found;
        if (Date.now() > deadline)
          throw new Error(`No such span; received: ${spans.map((span) => span.name).join(', ') || 'none'}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
