// Cached reads answered before Koa. A GET or HEAD whose exact path and query the read cache holds (an operation the
// contract marks `x-cacheable`, answered by the general chain less than 60 s ago, so already routed and validated) is
// answered here with every step the reads surface applies, written lean: request id and log line, security headers,
// CORS, the limit by address, Cache-Control, ETag and 304, errors in the read shape. Koa's context, koa-compose and a
// header write per `ctx.set` were most of a cached read's cost (issue #15). A request this path could not answer
// exactly as the general chain would goes to the general chain untouched: while draining, on a retiring endpoint,
// with a header parameter the contract would reject. test/fast-reads.test.ts diffs both paths on the same requests.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ValidateFunction } from 'ajv';
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import { deprecationsFor } from '../domain/versioning.js';
import {
  ageOf,
  matchesEtag,
  PUBLIC_CACHE_CONTROL,
  type CacheableOperation,
  type CachedRepresentation,
} from './caching.js';
import type { AppState } from './context.js';
import { PUBLIC_CORS_RESPONSE_HEADERS } from './cors.js';
import { renderFailure } from './error-handler.js';
import { addressKey, type RateLimiter } from './rate-limit.js';
import { contractAjv, type Contract } from './openapi.js';
import { logRequest, requestIdOf } from './request-context.js';
import { SECURITY_HEADERS } from './security-headers.js';
import { surfaceOf } from './surfaces.js';

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

interface HeaderParameter {
  /** Lower-cased, as Node keys `req.headers`. */
  name: string;
  required: boolean;
  validate: ValidateFunction;
}

export interface FastReadParts {
  deps: Pick<Deps, 'log' | 'lifecycle' | 'deprecations' | 'readCache'>;
  limiter: RateLimiter;
  contract: Contract;
  cacheable: CacheableOperation[];
  /** The Koa application of the general chain, whose request prototype computes the client address. */
  app: Koa<AppState>;
}

const JSON_TYPE = 'application/json; charset=utf-8';
/** Characters that make Koa parse a URL with Node's legacy parser rather than split it at `?` (parseurl). */
const NOT_SIMPLE_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * The header parameters the contract declares for each cacheable operation: the query and path are part of the cache
 * key, so a hit was valid once, but a header (If-None-Match) is checked per request, as the general chain would.
 */
function headerParameters(contract: Contract, cacheable: CacheableOperation[]): Map<string, HeaderParameter[]> {
  const ajv = contractAjv();
  return new Map(
    cacheable.map(({ operationId, path }) => {
      // surfaces.ts routes the path to the reads surface, whose steps this path repeats; any other would differ.
      const surface = surfaceOf('GET', path.replace(/\{[^}]+\}/g, 'x'));
      if (surface !== 'reads') throw new Error(`${operationId} is cacheable but on the ${surface} surface, not reads`);
      const parameters = (contract.api.getOperation(operationId)?.parameters ?? []) as Array<{
        in: string;
        name: string;
        required?: boolean;
        schema?: object;
      }>;
      const headers = parameters
        .filter((parameter) => parameter.in === 'header')
        .map((parameter) => ({
          name: parameter.name.toLowerCase(),
          required: parameter.required ?? false,
          validate: ajv.compile(parameter.schema ?? {}),
        }));
      return [operationId, headers];
    }),
  );
}

/**
 * Answers cached reads before Koa; passes every other request to `general` (Koa's callback), and so does a cached
 * read that is not exactly servable here.
 */
export function cachedReadsFirst(parts: FastReadParts, general: RequestListener): RequestListener {
  const { deps, limiter, app } = parts;
  const { log, lifecycle, deprecations, readCache } = deps;
  const headerChecks = headerParameters(parts.contract, parts.cacheable);

  /** Koa's own `ctx.ip` (TRUST_PROXY and X-Forwarded-For), from its request prototype without a whole context. */
  function clientAddress(req: IncomingMessage): string {
    const request = Object.create(app.request) as { app: Koa<AppState>; req: IncomingMessage; ip: string };
    request.app = app;
    request.req = req;
    return request.ip;
  }

  function servable(req: IncomingMessage, url: string, path: string, entry: CachedRepresentation): boolean {
    if (url.charCodeAt(0) !== 0x2f || NOT_SIMPLE_URL.test(url)) return false;
    if (deprecations.length > 0 && deprecationsFor(req.method!, path, deprecations).length > 0) return false;
    for (const header of headerChecks.get(entry.operationId) ?? []) {
      const value = req.headers[header.name];
      if (value === undefined ? header.required : !header.validate(value)) return false;
    }
    return true;
  }

  async function answer(req: IncomingMessage, res: ServerResponse, path: string, entry: CachedRepresentation) {
    const started = performance.now();
    const requestId = requestIdOf(req.headers['x-request-id'] as string | undefined);
    const headers: Array<string> = ['X-Request-Id', requestId];
    for (const [name, value] of SECURITY_HEADERS) headers.push(name, value);
    for (const [name, value] of PUBLIC_CORS_RESPONSE_HEADERS) headers.push(name, value);
    let status: number;
    let body: Buffer | undefined;
    try {
      const counted = await limiter.count(addressKey(clientAddress(req)));
      for (const [name, value] of counted.headers) headers.push(name, value);
      if (counted.rejection) throw counted.rejection;
      headers.push('Cache-Control', PUBLIC_CACHE_CONTROL, 'ETag', entry.etag, 'Age', ageOf(entry));
      const ifNoneMatch = req.headers['if-none-match'];
      if (ifNoneMatch && matchesEtag(ifNoneMatch, entry.etag)) {
        status = 304;
      } else {
        status = 200;
        body = entry.payload;
        headers.push('Content-Type', entry.contentType, 'Content-Length', String(body.length));
      }
    } catch (error) {
      const rendered = renderFailure(error, 'read', () => log.child({ requestId }));
      status = rendered.status;
      for (const [name, value] of Object.entries(rendered.headers)) headers.push(name, value);
      body = Buffer.from(JSON.stringify(rendered.body));
      headers.push('Cache-Control', 'no-store', 'Content-Type', JSON_TYPE, 'Content-Length', String(body.length));
    }
    logRequest(log, requestId, req.method!, path, status, started);
    res.writeHead(status, headers);
    // Node sends no body for HEAD (the Content-Length stays, as RFC 9110 allows and Koa does).
    res.end(body);
  }

  return (req, res) => {
    const url = req.url ?? '';
    const entry =
      (req.method === 'GET' || req.method === 'HEAD') && !lifecycle.draining ? readCache.get(url) : undefined;
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (!entry || !servable(req, url, path, entry)) return general(req, res);
    answer(req, res, path, entry).catch((error: unknown) => {
      log.error({ err: error }, 'request failed');
      res.destroy();
    });
  };
}
