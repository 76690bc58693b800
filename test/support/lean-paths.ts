// Holding a path answered before Koa (cached reads, src/http/fast-reads.ts; checkout session reads and creates,
// src/http/session-reads.ts and src/http/session-creates.ts; cached MCP tool calls, src/mcp/cached-calls.ts) equal to
// the general chain: a request's status, every header but Date and a generated
// request id, its body and its log line, and whether Koa answered it (Koa's createContext is counted).
import { Writable } from 'node:stream';
import Koa from 'koa';
import { expect, vi } from 'vitest';
import { createLogger, type Logger } from '../../src/log.js';
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
