// Holding a path answered before Koa (cached reads, src/http/fast-reads.ts; checkout session reads,
// src/http/session-reads.ts; checkout, UCP and ACP session creates, src/http/session-creates.ts; cached MCP tool calls,
// src/mcp/cached-calls.ts) equal to the general chain: a request's status, every header but Date and a generated request
// id, its body and its log line, and whether Koa answered it (Koa's createContext is counted).
import { Writable } from 'node:stream';
import Koa from 'koa';
import { expect, vi } from 'vitest';
import type { RequestListener } from '../../src/http/lean.js';
import { createLogger, type Logger } from '../../src/log.js';
import type { ServiceBehindProxy } from './outage.js';
import type { TestService } from './service.js';

export type Init = RequestInit & { headers?: Record<string, string> };

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The request's log line, without what differs per request. */
  logged: Record<string, unknown> | undefined;
  viaKoa: boolean;
}

/** Differ between any two requests: the clock, and a request id the service generates. */
const PER_REQUEST = new Set(['date', 'x-request-id']);
/** Count seconds, and may tick between two requests: compared to within one. */
const TICKING = ['age', 'ratelimit-reset', 'retry-after'];

export interface LeanPathProbe {
  /** The logger to start the service with: its lines are what `send` reports. */
  log: Logger;
  /** Sends the request from `address` (the service must trust one proxy: TRUST_PROXY=1). */
  send(api: TestService, path: string, init: Init, address: string): Promise<Answer>;
  /** An address no request has come from yet, so each request can count against a limit of its own. */
  newAddress(): string;
  restore(): void;
}

/** Call at the top of a test file: it spies on Koa to know which path answered. */
export function probeLeanPaths(): LeanPathProbe {
  const logLines: Array<Record<string, unknown>> = [];
  const createContext = vi.spyOn(Koa.prototype, 'createContext');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) logLines.push(JSON.parse(line));
      done();
    },
  });
  let addresses = 0;
  return {
    log: createLogger('info', sink),
    async send(api, path, init, address) {
      const contexts = createContext.mock.calls.length;
      const response = await api.http(path, { ...init, headers: { ...init.headers, 'X-Forwarded-For': address } });
      const body = await response.text();
      // A request id the caller sent and got back is compared; one the service generated is not.
      const keepsRequestId = response.headers.get('x-request-id') === init.headers?.['X-Request-Id'];
      const headers = Object.fromEntries(
        [...response.headers].filter(([name]) => !PER_REQUEST.has(name) || (name === 'x-request-id' && keepsRequestId)),
      );
      const requestId = response.headers.get('x-request-id');
      const line = logLines.find((entry) => entry.requestId === requestId && entry.msg === 'request');
      const { time: _time, ms: _ms, requestId: _id, ...logged } = line ?? {};
      return {
        status: response.status,
        headers,
        body,
        logged: line ? logged : undefined,
        viaKoa: createContext.mock.calls.length > contexts,
      };
    },
    newAddress: () => `198.51.${Math.floor(++addresses / 250)}.${addresses % 250}`,
    restore: () => createContext.mockRestore(),
  };
}

/** The two answers are the same but for the path that gave them and a second's tick. */
export function expectSame(second: Answer, general: Answer) {
  const [{ viaKoa: _second, ...one }, { viaKoa: _general, ...other }] = [
    structuredClone(second),
    structuredClone(general),
  ];
  for (const name of TICKING) {
    expect(name in one.headers).toBe(name in other.headers);
    expect(Math.abs(Number(one.headers[name] ?? 0) - Number(other.headers[name] ?? 0))).toBeLessThanOrEqual(1);
    delete one.headers[name];
    delete other.headers[name];
  }
  expect(one).toEqual(other);
}

/** A new session's ids (its own, its lines', in its links), numbered in order of appearance. */
export function withoutNewIds(answer: Answer): Answer {
  const seen = new Map<string, string>();
  const body = answer.body.replace(/(?<![\w-])(cart|cali)_[\w-]{16}(?![\w-])/g, (id, kind: string) => {
    if (!seen.has(id)) seen.set(id, `${kind}_${seen.size}`);
    return seen.get(id)!;
  });
  return { ...answer, body };
}

/** Whether a lean path may answer; off, every request goes on to the general chain as if it had declined. */
export interface LeanSwitch {
  on: boolean;
}

/**
 * A lean path's listener factory (e.g. sessionReadsFirst), for `vi.mock` of its module: the listener answers only
 * while the switch is on.
 */
export function switchable<Parts>(
  lean: LeanSwitch,
  first: (parts: Parts, general: RequestListener) => RequestListener,
): (parts: Parts, general: RequestListener) => RequestListener {
  return (parts, general) => {
    const listener = first(parts, general);
    return (req, res) => (lean.on ? listener : general)(req, res);
  };
}

/** A request, or how to make each one (a body stream or an Idempotency-Key is sent once). */
export type Request = Init | (() => Init);

/**
 * Sending by the path chosen with `lean`, to `service()` unless told; `adjust` takes out of an answer what may rightly
 * differ between two requests.
 */
export function pathSender(
  probe: LeanPathProbe,
  lean: LeanSwitch,
  service: () => TestService,
  adjust = (answer: Answer) => answer,
) {
  /** Sends the request by the chosen path, from `address`. */
  async function sendBy(path: 'lean' | 'general', service: TestService, url: string, init: Request, address: string) {
    lean.on = path === 'lean';
    try {
      return adjust(await probe.send(service, url, typeof init === 'function' ? init() : init, address));
    } finally {
      lean.on = true;
    }
  }
  /** The same request by the general chain and by the lean path, each from a fresh address. */
  async function bothPaths(
    url: string,
    init: Request = {},
    to = service(),
  ): Promise<{ general: Answer; second: Answer }> {
    const general = await sendBy('general', to, url, init, probe.newAddress());
    const second = await sendBy('lean', to, url, init, probe.newAddress());
    return { general, second };
  }
  return { sendBy, bothPaths };
}

/** Runs `send` with a drain beginning as soon as the limiter has counted a request: after a path was chosen for it. */
export async function drainingOnceCounted<T>(api: TestService, send: () => Promise<T>): Promise<T> {
  const { rateLimiter, lifecycle } = api.service.deps;
  const startDrain = <Counted>(counted: Counted) => {
    lifecycle.draining = true;
    return counted;
  };
  const count = rateLimiter.count.bind(rateLimiter);
  const consume = rateLimiter.consume.bind(rateLimiter);
  const counting = vi
    .spyOn(rateLimiter, 'count')
    .mockImplementation(async (...keys) => startDrain(await count(...keys)));
  const consuming = vi
    .spyOn(rateLimiter, 'consume')
    .mockImplementation(async (...args) => startDrain(await consume(...args)));
  try {
    return await send();
  } finally {
    counting.mockRestore();
    consuming.mockRestore();
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
