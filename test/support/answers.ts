// What a request is answered, as a test asserts it: its status, every header it carries (each documented header with
// its value), its body and the one line it is logged with. Requests come from addresses of their own (the service
// must trust one proxy: TRUST_PROXY=1), so each can count against a rate limit of its own.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { Deprecation } from '../../src/domain/versioning.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { ServiceBehindProxy } from './outage.js';
import { startTestService, type TestService } from './service.js';

export type Init = RequestInit & { headers?: Record<string, string> };
/** A request, or how to make each one (a body stream or a new Idempotency-Key is sent once). */
export type Request = Init | (() => Init);

export interface Answer {
  status: number;
  /** Every header but the transport's own (Date, Keep-Alive, Content-Length, Transfer-Encoding). */
  headers: Record<string, string>;
  text: string;
  /** The body parsed, when it is JSON. */
  body: any;
  /** The request's log line, when it was logged in exactly one. */
  logged: Record<string, unknown> | undefined;
  /** What was sent, for the log line's expected method and path. */
  sent: { method: string; path: string };
}

/** Transport headers: how the bytes travel, not what the service answers. */
const TRANSPORT = new Set(['date', 'keep-alive', 'content-length', 'transfer-encoding']);

export interface RequestRecorder {
  /** The logger to start the service with: its lines are what `send` reports. */
  log: Logger;
  /** Sends the request from `address` (a new one unless given). */
  send(api: TestService, path: string, init?: Request, address?: string): Promise<Answer>;
  /** An address no request has come from yet. */
  newAddress(): string;
}

/** A logger at `info` whose lines are kept, parsed, in `lines`, for a test to read what the service logged. */
export function recordLogLines(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('info', sink), lines };
}

export function recordRequests(): RequestRecorder {
  const { log, lines: logLines } = recordLogLines();
  let addresses = 0;
  const newAddress = () => `198.51.${Math.floor(++addresses / 250)}.${addresses % 250}`;
  return {
    log,
    newAddress,
    async send(api, path, request = {}, address = newAddress()) {
      const init = typeof request === 'function' ? request() : request;
      const before = logLines.length;
      const response = await api.http(path, { ...init, headers: { ...init.headers, 'X-Forwarded-For': address } });
      const text = await response.text();
      const headers = Object.fromEntries([...response.headers].filter(([name]) => !TRANSPORT.has(name)));
      const requestId = response.headers.get('x-request-id');
      // Its line, among those logged since it was sent (a caller's request id may be sent more than once).
      const lines = logLines.slice(before).filter((entry) => entry.requestId === requestId && entry.msg === 'request');
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      return {
        status: response.status,
        headers,
        text,
        body,
        logged: lines.length === 1 ? lines[0] : undefined,
        sent: { method: init.method ?? 'GET', path: new URL(path, api.url).pathname },
      };
    },
  };
}

export interface RecordedServiceOptions {
  /** RATE_LIMIT_PER_MINUTE: what each address may send. */
  limit: number;
  /** More environment (a binding's, MCP_ALLOWED_ORIGINS). */
  env?: Record<string, string>;
  deprecations?: Deprecation[];
}

/** The file's service (see recordedService) and the recorder of its requests. */
export type RecordedService = TestService & { requests: RequestRecorder };

/**
 * A test file's service whose requests are recorded (recordRequests): it trusts one proxy, so X-Forwarded-For names the
 * client and each request can count against an address of its own, under `limit` requests per minute. Started before
 * the file's tests and closed after them; it answers as the TestService started then.
 */
export function recordedService(options: RecordedServiceOptions): RecordedService {
  const requests = recordRequests();
  let started: TestService | undefined;
  const current = (): TestService => {
    if (!started) throw new Error('The service is started before the tests (beforeAll)');
    return started;
  };
  beforeAll(async () => {
    started = await startTestService({
      env: { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: String(options.limit), ...options.env },
      log: requests.log,
      deprecations: options.deprecations,
    });
  });
  afterAll(async () => {
    await started?.close();
  });
  return {
    requests,
    get url() {
      return current().url;
    },
    get service() {
      return current().service;
    },
    get database() {
      return current().database;
    },
    get client() {
      return current().client;
    },
    http: (path, init) => current().http(path, init),
    close: () => current().close(),
  };
}

/** Headers every response carries. */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

/** CORS on the public surfaces (catalogue, checkout) for any origin, without credentials. */
export const PUBLIC_CORS = {
  vary: 'Origin',
  'access-control-allow-origin': '*',
  'access-control-expose-headers':
    'ETag,API-Version,Idempotent-Replayed,Retry-After,RateLimit-Limit,RateLimit-Remaining,RateLimit-Reset,X-Request-Id,Deprecation,Sunset,Link',
};

/** The answer to a public surface's CORS preflight. */
export const PUBLIC_PREFLIGHT = {
  vary: 'Origin',
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET,HEAD,POST',
  'access-control-allow-headers':
    'Content-Type,Idempotency-Key,API-Version,If-None-Match,X-Request-Id,traceparent,tracestate',
  'access-control-max-age': '600',
};

export const JSON_BODY = { 'content-type': 'application/json; charset=utf-8' };
export const NOT_STORED = { 'cache-control': 'no-store' };

/** A count of seconds within a minute's window (Age, RateLimit-Reset, Retry-After tick). */
export const SECONDS = expect.stringMatching(/^(?:\d|[1-5]\d|60)$/);
/** A request id the service made: a UUID. */
export const NEW_REQUEST_ID = expect.stringMatching(/^[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}$/);

/** RateLimit-* of the address's `limit`, `remaining` left. */
export function rateLimit(limit: number, remaining: number) {
  return {
    'ratelimit-limit': String(limit),
    'ratelimit-remaining': String(remaining),
    'ratelimit-reset': SECONDS,
  };
}

/** The 429's headers: the address's budget spent, and when to come back. */
export function rateLimited(limit: number) {
  return { ...rateLimit(limit, 0), 'retry-after': expect.stringMatching(/^(?:[1-9]|[1-5]\d|60)$/) };
}

export interface Expected {
  status: number;
  /** Every header but the security headers (always there) and the transport's; X-Request-Id a new UUID unless given. */
  headers: Record<string, unknown>;
  /** The body (an exact value or asymmetric matchers); none checked unless given. */
  body?: unknown;
  /** The log line's path when it is not the path sent (Koa's raw path: percent-encoding kept, query left out). */
  loggedPath?: string;
}

/** The answer is `expected`, and was logged in one line with its status under the id it carries. */
export function expectAnswer(answer: Answer, expected: Expected): void {
  const context = `${answer.sent.method} ${answer.sent.path} → ${answer.status}: ${answer.text.slice(0, 600)}`;
  expect(answer.status, context).toBe(expected.status);
  expect(answer.headers, context).toEqual({
    ...SECURITY_HEADERS,
    connection: 'keep-alive',
    'x-request-id': NEW_REQUEST_ID,
    ...expected.headers,
  });
  if ('body' in expected) expect(answer.body, context).toEqual(expected.body);
  expect(answer.logged, context).toEqual({
    level: 30,
    time: expect.any(Number),
    service: 'storefront',
    requestId: answer.headers['x-request-id'],
    method: answer.sent.method,
    path: expected.loggedPath ?? answer.sent.path,
    status: expected.status,
    ms: expect.any(Number),
    msg: 'request',
  });
}

/** Runs `send` with a drain beginning as soon as the limiter has counted the request: while it is being answered. */
export async function drainingOnceCounted<T>(api: TestService, send: () => Promise<T>): Promise<T> {
  const { rateLimiter, lifecycle } = api.service.deps;
  const spies = (['count', 'consume'] as const)
    .filter((name) => typeof rateLimiter[name] === 'function')
    .map((name) => {
      const original = (rateLimiter[name] as (...args: unknown[]) => Promise<unknown>).bind(rateLimiter);
      return vi.spyOn(rateLimiter, name).mockImplementation((async (...args: unknown[]) => {
        const counted = await original(...args);
        lifecycle.draining = true;
        return counted;
      }) as never);
    });
  try {
    return await send();
  } finally {
    for (const spy of spies) spy.mockRestore();
    lifecycle.draining = false;
  }
}

/** Runs `send` while the service drains (a request arriving then finds it draining). */
export async function whileDraining<T>(api: TestService, send: () => Promise<T>): Promise<T> {
  api.service.deps.lifecycle.draining = true;
  try {
    return await send();
  } finally {
    api.service.deps.lifecycle.draining = false;
  }
}

/** How many pino child loggers `send` made: none per request at the default level (issue #15). */
export async function childLoggersDuring(api: TestService, send: () => Promise<unknown>): Promise<number> {
  const child = vi.spyOn(api.service.deps.log, 'child');
  try {
    await send();
    return child.mock.calls.length;
  } finally {
    child.mockRestore();
  }
}

/** Runs `send` with the service's PostgreSQL unreachable, and reconnects it after. */
export async function whilePostgresCut<T>(outage: ServiceBehindProxy, send: () => Promise<T>): Promise<T> {
  await outage.proxy.cut();
  try {
    return await send();
  } finally {
    await outage.proxy.restore();
  }
}
