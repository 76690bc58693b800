import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs. Credentials never reach them: the fields that could carry one are redacted. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'storefront' },
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', '*.client_secret', '*.access_token', '*.token', 'token', 'client_secret'],
      censor: '[redacted]',
    },
  });
}
