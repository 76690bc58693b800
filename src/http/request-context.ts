// A request id for every request (echoed as X-Request-Id) and one structured log line when it ends (src/http/server.ts).
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import type { AppState } from './context.js';
import type { ResponseHeaders } from './response-headers.js';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is safe to log and echo, else the request's trace id when traced, else a new one. */
export function requestIdOf(incoming: string | string[] | undefined, traceId?: string): string {
  return typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : (traceId ?? randomUUID());
}

/** The one line each request is logged with. The path only: query strings and headers may carry credentials. */
export function logRequest(
  log: Logger,
  requestId: string,
  request: { readonly method: string; readonly path: string },
  status: number,
  started: number,
) {
  // Read only when the line is written: Koa parses the URL for \`path\`.
  if (!log.isLevelEnabled('info')) return;
  const { method, path } = request;
  log.info({ requestId, method, path, status, ms: Math.round(performance.now() - started) }, 'request');
}

/**
 * The request's state. Its logger, bound to the request id, is made on first use only: most requests log nothing but
 * their one line, and a pino child per request was a measurable part of a cached read.
 */
export class RequestState implements AppState {
  #log: Logger | undefined;
  constructor(
    private readonly root: Logger,
    readonly requestId: string,
    readonly headers: ResponseHeaders,
  ) {}
  get log(): Logger {
    return (this.#log ??= this.root.child({ requestId: this.requestId }));
  }
}
