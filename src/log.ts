import { pino, stdSerializers, type DestinationStream, type Logger } from 'pino';

export type { Logger };

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
