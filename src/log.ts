import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** The trace fields of the line being written (`trace_id`, `span_id`), when a traced request is being served. */
export type TraceFields = () => Record<string, string> | undefined;

const TRACE_FIELDS = Symbol('traceFields');
type Correlated = { [TRACE_FIELDS]?: TraceFields };

/**
 * Every line `log` and its children write from now on carries what `fields` answers (src/service.ts passes the
 * tracer's, when tracing is on). Children are made with the logger as their prototype, so they see it too.
 */
export function correlateLogs(log: Logger, fields: TraceFields): void {
  (log as Correlated)[TRACE_FIELDS] = fields;
}

function withoutQueryData(error: Error): Record<string, unknown> {
  const { params: _params, query: _query, ...rest } = stdSerializers.err(error) as unknown as Record<string, unknown>;
  return rest;
}

/**
 * Structured JSON logs, to stdout unless a destination is given (tests read them). Credentials never reach them: the
 * fields that could carry one are redacted.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { service: 'storefront' },
    // The trace and span of the request being served, once correlateLogs gave the tracer's; nothing otherwise.
    mixin: (_object, _level, logger) => (logger as Correlated)[TRACE_FIELDS]?.() ?? {},
    // Database errors carry the query's bound parameters (emails, token hashes): log what failed, not the data.
    serializers: { err: withoutQueryData },
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        '*.client_secret',
        '*.access_token',
        '*.token',
        'token',
        'client_secret',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
