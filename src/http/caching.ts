// Caching of read responses. At the edge: `Cache-Control: public, max-age=60`, a weak ETag, 304 on a matching
// If-None-Match. In the process: one representation cache (deps.readCache) holds the serialized answer of each
// operation the contract marks `x-cacheable`, keyed by what the request means (src/http/read-keys.ts: however its path
// and query are spelled, one read is one entry), so a repeated read touches
// neither the database nor the serializer and is still served while the database is briefly away. The same cache holds
// the results of the catalog MCP server's read tools as JSON text and its UTF-8 bytes (fetchValue), under the same
// 60 s rule, so a cached tool call is answered without serializing or encoding (src/mcp/transport.ts). Nothing else
// is cached: services always query the database, so an answer is never older than its entry's lifetime.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Document } from 'openapi-backend';
import type { ValidatorRegistry } from '../validators.js';
import type { AppContext, AppMiddleware } from './context.js';
import { answer, type ContractHandler, type OperationHandlers } from './openapi.js';
import type { CachedRepresentation, ReadCache, ReadKeys, Representation } from '../ports.js';

export const PUBLIC_CACHE_CONTROL = 'public, max-age=60';
/** The longest a representation is served after its query started: what `max-age=60` promises the edge. */
const READ_CACHE_TTL_MS = 60_000;
const READ_CACHE_MAX_ENTRIES = 1_000;
/**
 * Clients name what is cached (a read's parameters, a tool's arguments), so the cache is bounded in bytes as well as
 * entries: what one entry may hold is bounded by the contract's page size, but not the sum. A catalogue answer is a
 * few kilobytes; 16 MiB keeps every entry the count allows, and no more, under the 128 MB heap.
 */
const READ_CACHE_MAX_BYTES = 16 * 1024 * 1024;
/** What an entry costs beyond its payload and key (its object, the LRU's slots, the ETag). */
const ENTRY_OVERHEAD_BYTES = 512;
/** The operation object's extension that allows its responses in the process cache (openapi/paths/). */
const CACHEABLE = 'x-cacheable';

function weakEtag(payload: Buffer): string {
  return `W/"${createHash('sha1').update(payload).digest('base64url').slice(0, 27)}"`;
}

/** Whether an If-None-Match value names this ETag (weak comparison, RFC 9110 section 13.1.2). */
export function matchesEtag(ifNoneMatch: string, etag: string): boolean {
  if (ifNoneMatch.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  return ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === opaque);
}

/** The media type of every JSON answer, as Koa sets it for an object body. */
export const JSON_TYPE = 'application/json; charset=utf-8';

export function representationOf(body: unknown, contentType = JSON_TYPE): Representation {
  const payload = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return { payload, etag: weakEtag(payload), contentType };
}

/** Where a representation's headers are set: Koa's context, or the request's header list itself. */
interface HeaderTarget {
  set(name: string, value: string): void;
}

/**
 * The one answer of a representation, with its headers set on `target` in the order every answer lists them:
 * Cache-Control and ETag; then 304 when If-None-Match names the ETag, else 200 with its Content-Type and Content-Length;
 * then Age, for one served from the read cache. Returns the status; the body, for a 200, is the payload.
 */
function answerWith(
  target: HeaderTarget,
  representation: Representation,
  ifNoneMatch: string | undefined,
  age: string | undefined,
): 200 | 304 {
  target.set('Cache-Control', PUBLIC_CACHE_CONTROL);
  target.set('ETag', representation.etag);
  const status = ifNoneMatch && matchesEtag(ifNoneMatch, representation.etag) ? 304 : 200;
  if (status === 200) {
    target.set('Content-Type', representation.contentType);
    target.set('Content-Length', String(representation.payload.length));
  }
  if (age !== undefined) target.set('Age', age);
  return status;
}

/** Sends a cacheable representation with Cache-Control and ETag, or 304 when If-None-Match matches; `age` when cached. */
export function sendRepresentation(ctx: AppContext, representation: Representation, age?: string): void {
  ctx.status = answerWith(ctx, representation, ctx.req.headers['if-none-match'], age);
  if (ctx.status === 200) ctx.body = representation.payload;
}

export function sendCacheable(ctx: AppContext, body: unknown, contentType?: string): void {
  sendRepresentation(ctx, representationOf(body, contentType));
}

/** A value other than a response (an MCP tool's result), with when its query started. */
interface CachedValue {
  value: unknown;
  readAt: number;
}

type CacheEntry = CachedRepresentation | CachedValue;
type LoadEntry = () => Promise<Omit<CachedRepresentation, 'readAt'> | Omit<CachedValue, 'readAt'>>;

/** The Age header (RFC 9111): a cache in front counts it against `max-age=60`, so the 60 s bound holds end to end. */
export function ageOf(representation: CachedRepresentation): string {
  return String(Math.max(0, Math.floor((Date.now() - representation.readAt) / 1000)));
}

/** An entry's size: a response's payload, or a value's text and bytes (an MCP tool's result), plus its key (UTF-16). */
function entryBytes(entry: CacheEntry, key: string): number {
  let held = 0;
  if ('payload' in entry) held = entry.payload.length;
  else if (typeof entry.value === 'string') held = 2 * entry.value.length;
  else if (entry.value !== null && typeof entry.value === 'object') {
    const { text, bytes } = entry.value as { text?: unknown; bytes?: unknown };
    if (typeof text === 'string') held += 2 * text.length;
    if (Buffer.isBuffer(bytes)) held += bytes.length;
  }
  return held + 2 * key.length + ENTRY_OVERHEAD_BYTES;
}

export function createReadCache(): ReadCache {
  const cache = new LRUCache<string, CacheEntry, LoadEntry>({
    max: READ_CACHE_MAX_ENTRIES,
    maxSize: READ_CACHE_MAX_BYTES,
    sizeCalculation: entryBytes,
    ttl: READ_CACHE_TTL_MS,
    // A load still running when newer entries push its entry out (many distinct reads at once) still answers the
    // requests waiting for it, rather than failing them with lru-cache's abort ("evicted", a 500).
    ignoreFetchAbort: true,
    fetchMethod: async (_key, _stale, { options, context: load }) => {
      const readAt = Date.now();
      const loaded = await load();
      // The 60 s count from before the query: an answer is never served more than 60 s after what it shows.
      options.ttl = Math.max(1, READ_CACHE_TTL_MS - (Date.now() - readAt));
      return { ...loaded, readAt };
    },
  });
  return {
    get: (key) => cache.get(key) as CachedRepresentation | undefined,
    fetch: async (key, load) => (await cache.fetch(key, { context: load })) as CachedRepresentation,
    fetchValue: async <T>(key: string, load: () => Promise<T>) =>
      ((await cache.fetch(key, { context: async () => ({ value: await load() }) })) as CachedValue).value as T,
    peekValue: <T>(key: string) => (cache.get(key) as CachedValue | undefined)?.value as T | undefined,
    clear: () => cache.clear(),
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

interface OperationObject {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  [CACHEABLE]?: boolean;
}

export interface CacheableOperation {
  operationId: string;
  method: string;
  /** The path template, e.g. /api/store/products/{id}. */
  path: string;
}

/**
 * The operations the contract marks `x-cacheable`. One that is not a GET, or that may be called with credentials
 * (any security requirement that is not empty), stops the start: its answers could differ per caller, and a cached
 * one would be served to the next.
 */
export function cacheableOperations(document: Document): CacheableOperation[] {
  const cacheable: CacheableOperation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = (item as Record<string, OperationObject | undefined>)[method];
      if (!operation?.[CACHEABLE]) continue;
      const name = `${method.toUpperCase()} ${path} (${operation.operationId})`;
      if (method !== 'get') throw new Error(`${name} is marked ${CACHEABLE}, but only GET operations may be cached`);
      const security = operation.security ?? document.security ?? [];
      if (security.some((requirement) => Object.keys(requirement).length > 0)) {
        throw new Error(`${name} is marked ${CACHEABLE} but accepts credentials: its answers must never be cached`);
      }
      cacheable.push({ operationId: operation.operationId!, method: 'GET', path });
    }
  }
  return cacheable;
}

/** The 200 a cacheable handler left on the context, as a representation. */
function answered(ctx: AppContext, operationId: string): Omit<CachedRepresentation, 'readAt'> {
  if (ctx.status !== 200 || ctx.body === undefined || ctx.body === null) {
    throw new Error(`${operationId} is cacheable but answered ${ctx.status} without throwing`);
  }
  const contentType = ctx.response.get('Content-Type') || undefined;
  return { ...representationOf(ctx.body, contentType), operationId };
}

function cachedOperation(
  operationId: string,
  handler: ContractHandler,
  cache: ReadCache,
  keys: () => ReadKeys,
): (...args: Parameters<ContractHandler>) => Promise<void> {
  return async (input, ctx) => {
    const key = keys().ofInput(operationId, input);
    // A read without a key (a `fields` value its handler refuses) is answered, and refused, uncached.
    if (key === undefined) return answer(ctx, await handler(input, ctx));
    const representation = await cache.fetch(key, async () => {
      answer(ctx, await handler(input, ctx));
      return answered(ctx, operationId);
    });
    sendRepresentation(ctx, representation, ageOf(representation));
  };
}

/**
 * The handlers with every operation the contract marks cacheable answered from the read cache (the handler runs on a
 * miss; its 200 body is stored), under the key `keys` gives (read once the contract, built from these handlers,
 * exists). No other operation can reach the cache.
 */
export function cacheRepresentations(
  handlers: OperationHandlers,
  operations: CacheableOperation[],
  cache: ReadCache,
  keys: () => ReadKeys,
): OperationHandlers {
  const wrapped: OperationHandlers = { ...handlers };
  for (const { operationId } of operations) {
    const id = operationId as keyof OperationHandlers;
    if (!handlers[id]) throw new Error(`${operationId} is marked ${CACHEABLE} but has no handler`);
    wrapped[id] = cachedOperation(operationId, handlers[id], cache, keys);
  }
  return wrapped;
}

interface HeaderCheck {
  /** Lower-cased, as Node keys `req.headers`. */
  name: string;
  required: boolean;
  validate: (value: unknown) => boolean;
}

/**
 * The read cache as a step of each cacheable operation's route, before the operation's validation: a representation
 * stored in the last 60 s for what the request means (src/http/read-keys.ts, whose key of a request target repeats the
 * contract's checks of its path and query) is answered here, with Cache-Control, ETag, Age and 304, when the contract
 * admits the request's headers too. Anything else goes on to the operation, whose handler fills the cache. A hit is
 * answered from the request's header list (src/http/response-headers.ts), written by the door.
 */
export function readCacheStep(
  cache: ReadCache,
  keys: ReadKeys,
  operationId: string,
  parameters: Array<{ in: string; name: string; required?: boolean; schema?: object }>,
  validators: ValidatorRegistry,
): AppMiddleware {
  const headers: HeaderCheck[] = parameters
    .filter((parameter) => parameter.in === 'header')
    .map((parameter) => ({
      name: parameter.name.toLowerCase(),
      required: parameter.required ?? false,
      validate: validators.validator(
        'firstError',
        `read-cache:${operationId}:${parameter.name}`,
        parameter.schema ?? {},
      ),
    }));
  const admitted = (ctx: AppContext) => {
    for (const header of headers) {
      const value = ctx.req.headers[header.name];
      if (value === undefined ? header.required : !header.validate(value)) return false;
    }
    return true;
  };
  // A hit is answered from the request's header list (nothing before this step sets the headers on the response),
  // written by the door in one write.
  return (ctx, next) => {
    const read = keys.ofTarget(ctx.url);
    const entry = read && cache.get(read.key);
    if (!entry || !admitted(ctx)) return next();
    const { headers } = ctx.state;
    const status = answerWith(headers, entry, ctx.req.headers['if-none-match'], ageOf(entry));
    headers.answer(status, status === 200 ? entry.payload : undefined);
  };
}
