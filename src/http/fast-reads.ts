// Cached reads answered before Koa. A GET or HEAD whose read the cache holds (an operation the contract marks
// `x-cacheable`, answered by the general chain less than 60 s ago, keyed by what it means however it is spelled:
// src/http/read-keys.ts, whose key of a raw target repeats the contract's checks of its path and query) is
// answered here with every step the reads surface applies, written lean (src/http/lean.ts, which cached MCP tool
// calls share): request id and log line, security headers, CORS, the limit by address, errors in the read shape;
// here, Cache-Control, ETag and 304. A request this path could not answer
// exactly as the general chain would goes to the general chain untouched: while draining, on a retiring endpoint,
// with a header parameter the contract would reject. test/fast-reads.test.ts diffs both paths on the same requests.
import type { IncomingMessage } from 'node:http';
import type { WebDeps as Deps } from './web-deps.js';
import { deprecationsFor } from '../domain/versioning.js';
import { ageOf, matchesEtag, PUBLIC_CACHE_CONTROL, type CacheableOperation } from './caching.js';
import type { CachedRepresentation, ReadKeys } from '../ports.js';
import { PUBLIC_CORS_RESPONSE_HEADERS } from './cors.js';
import {
  admitsHeaders,
  leanResponder,
  operationParameters,
  type HeaderParameter,
  type LeanAnswer,
  type LeanParts,
  type RequestListener,
} from './lean.js';
import { contractAjv, type Contract } from './openapi.js';
import { surfaceOf } from './surfaces.js';

export interface FastReadParts extends LeanParts {
  deps: Pick<Deps, 'lifecycle' | 'deprecations' | 'readCache'>;
  contract: Contract;
  cacheable: CacheableOperation[];
  keys: ReadKeys;
}

/** Characters that make Koa parse a URL with Node's legacy parser rather than split it at `?` (parseurl). */
const NOT_SIMPLE_URL = /[\t\n\f\r #\u00a0\ufeff]/;

/**
 * The header parameters the contract declares for each cacheable operation: the path and query are checked as the key
 * is made, but a header (If-None-Match) is checked per request, as the general chain would.
 */
function headerParameters(contract: Contract, cacheable: CacheableOperation[]): Map<string, HeaderParameter[]> {
  const ajv = contractAjv();
  return new Map(
    cacheable.map(({ operationId, path }) => {
      // surfaces.ts routes the path to the reads surface, whose steps this path repeats; any other would differ.
      const surface = surfaceOf('GET', path.replace(/\{[^}]+\}/g, 'x'));
      if (surface !== 'reads') throw new Error(`${operationId} is cacheable but on the ${surface} surface, not reads`);
      const headers = operationParameters(contract, operationId, ajv).filter((parameter) => parameter.in === 'header');
      return [operationId, headers];
    }),
  );
}

/**
 * Answers cached reads before Koa; passes every other request to `general` (Koa's callback), and so does a cached
 * read that is not exactly servable here.
 */
export function cachedReadsFirst(parts: FastReadParts, general: RequestListener): RequestListener {
  const { lifecycle, deprecations, readCache } = parts.deps;
  const { keys } = parts;
  const headerChecks = headerParameters(parts.contract, parts.cacheable);
  const respond = leanResponder(parts);

  /** The cached answer to this request, if the cache holds its read and this path can answer it as Koa would. */
  function cachedFor(req: IncomingMessage, url: string): CachedRepresentation | undefined {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || lifecycle.draining) return undefined;
    if (url.charCodeAt(0) !== 0x2f || NOT_SIMPLE_URL.test(url)) return undefined;
    const read = keys.ofTarget(url);
    return read && readCache.get(read.key);
  }

  function servable(req: IncomingMessage, path: string, entry: CachedRepresentation): boolean {
    if (deprecations.length > 0 && deprecationsFor(req.method!, path, deprecations).length > 0) return false;
    return admitsHeaders(req, headerChecks.get(entry.operationId) ?? []);
  }

  /** The cached representation with its caching headers, or a 304 when If-None-Match names it. */
  function representation(req: IncomingMessage, entry: CachedRepresentation, headers: string[]): LeanAnswer {
    headers.push('Cache-Control', PUBLIC_CACHE_CONTROL, 'ETag', entry.etag, 'Age', ageOf(entry));
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch && matchesEtag(ifNoneMatch, entry.etag)) return { status: 304 };
    return { status: 200, body: { payload: entry.payload, contentType: entry.contentType } };
  }

  return (req, res) => {
    const started = performance.now();
    const url = req.url ?? '';
    const entry = cachedFor(req, url);
    if (!entry) return general(req, res);
    const query = url.indexOf('?');
    const path = query < 0 ? url : url.slice(0, query);
    if (!servable(req, path, entry)) return general(req, res);
    respond(req, res, {
      path,
      shape: 'read',
      surfaceHeaders: PUBLIC_CORS_RESPONSE_HEADERS,
      started,
      answer: (headers) => representation(req, entry, headers),
    });
  };
}
