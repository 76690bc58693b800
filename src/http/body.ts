// Request bodies: JSON and forms up to 100 kB (413 beyond), and JSON nested at most 32 levels deep and holding at most
// 4,096 objects and arrays, checked without recursion so hostile nesting cannot exhaust the stack. MCP routes read
// their own bodies (JSON-RPC errors).
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import type { AppContext, AppMiddleware } from './context.js';
import { BadRequest, PayloadTooLarge } from '../domain/errors.js';

/** The largest request body, on every route: 100 kB. */
export const BODY_LIMIT_BYTES = 100 * 1024;
const BODY_LIMIT = '100 kB';
const MAX_DEPTH = 32;
/** Bodies are decoded as UTF-8 whatever charset they name. */
const ENCODING = 'utf-8';

/**
 * At most this many objects and arrays in one JSON body. Real requests hold a few hundred (100 line items with their
 * nested objects); 100 kB of empty objects holds 34,000, and every later pass over such a body (validation, the
 * idempotency hash, the stored-text check, garbage collection) costs the only thread time in proportion: refused here,
 * after one cheap walk that stops at the bound, a body costs the event loop a few milliseconds whatever it holds.
 */
export const MAX_CONTAINERS = 4_096;

/** What a JSON body's shape allows, in words for error messages. */
export const BODY_SHAPE_LIMITS = `nested at most ${MAX_DEPTH} levels deep and holding at most ${MAX_CONTAINERS.toLocaleString('en')} objects and arrays`;

/**
 * Whether `value` nests objects or arrays deeper than `maxDepth`, or holds more than MAX_CONTAINERS of them. Runs on
 * every JSON body before anything else reads it, so it allocates nothing per value (a body of 34,000 empty objects
 * took 6 ms with a pair per value): nodes and their depths on two stacks, and only objects and arrays pushed.
 */
export function exceedsDepth(value: unknown, maxDepth = MAX_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  let containers = 1;
  while (nodes.length) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > maxDepth) return true;
    const children: unknown[] | Record<string, unknown> = node as unknown[] | Record<string, unknown>;
    if (Array.isArray(children)) {
      for (const child of children) {
        if (child !== null && typeof child === 'object') {
          if (++containers > MAX_CONTAINERS) return true;
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      // JSON.parse makes only own, enumerable properties (`__proto__` included), so for…in visits exactly those.
      for (const key in children) {
        const child = children[key];
        if (child !== null && typeof child === 'object') {
          if (++containers > MAX_CONTAINERS) return true;
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** Why a parsed body is refused, if it is. */
function depthError(parsed: unknown): BadRequest | undefined {
  if (!exceedsDepth(parsed)) return undefined;
  return new BadRequest('invalid_body', `The body must be JSON ${BODY_SHAPE_LIMITS}.`, { param: 'body' });
}

/** A body read: its text, and the exact bytes it was decoded from (UCP 2026-08-25 fingerprints those). */
export type BodyRead =
  { outcome: 'too_large' } | { outcome: 'aborted' } | { outcome: 'read'; text: string; bytes: Buffer };

/**
 * The one reader of request bodies (the contract's operations, the protocol bindings, the MCP endpoints): at most
 * `limit` bytes, decoded as UTF-8. A body announced or found larger stops being read (its answer closes the
 * connection); a client that goes away mid-body is `aborted`, its mistake, not a server error.
 */
export function readBody(req: Readable & { headers?: IncomingHttpHeaders }, limit: number): Promise<BodyRead> {
  if (Number(req.headers?.['content-length']) > limit) return Promise.resolve({ outcome: 'too_large' });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (read: BodyRead) => {
      req.off('data', onData).off('end', onEnd).off('error', onAborted).off('close', onAborted);
      resolve(read);
    };
    function onData(chunk: Buffer) {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      settle({ outcome: 'too_large' });
      // The rest of the body is not read; the answer closes the connection (Connection: close), as its callers set.
      req.pause();
    }
    function onEnd() {
      const bytes = Buffer.concat(chunks, size);
      settle({ outcome: 'read', text: bytes.toString(ENCODING), bytes });
    }
    function onAborted() {
      settle({ outcome: 'aborted' });
    }
    req.on('data', onData).on('end', onEnd).on('error', onAborted).on('close', onAborted);
  });
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** `"__proto__"`, however escaped: only a body that may name it as a key is parsed again to find out. */
const MAY_NAME_PROTO =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"/;

/** Whether a JSON text has a key `__proto__`, which would reach an object's prototype once copied. */
function namesProto(text: string): boolean {
  let found = false;
  JSON.parse(text, (key, value: unknown) => {
    if (key === '__proto__') found = true;
    return value;
  });
  return found;
}

/** The methods whose bodies the contract's operations read. */
const PARSED_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** JSON media types (as the former body parser took them), then forms. */
const JSON_TYPES = ['json', '+json', 'application/csp-report'];

/**
 * The body as sent, inflated when it names gzip or deflate (Content-Encoding); undefined for an encoding this service
 * does not read. The limit applies to the inflated bytes.
 */
function decodedBody(req: IncomingMessage): Readable | undefined {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return req;
  if (encoding !== 'gzip' && encoding !== 'deflate') return undefined;
  const inflate = encoding === 'gzip' ? createGunzip() : createInflate();
  req.on('error', (error) => inflate.destroy(error));
  return req.pipe(inflate);
}

const unparsable = () =>
  new BadRequest(
    'invalid_body',
    'The request body could not be parsed: send well-formed JSON (or a form, on OAuth endpoints).',
    { param: 'body' },
  );

/** A form's fields; a field sent more than once is a list of its values. */
function formFields(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const earlier = fields[name];
    fields[name] = earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
  }
  return fields;
}

/**
 * The step that reads the body of an operation that takes one (JSON, or a form; any other type is not read and is
 * refused by the operation's media-type check), keeping its text (`rawBody`, which a processor's signature covers).
 * It records, not throws, why the body could not be read: the operation reports it after routing and authentication.
 */
export function parseBodies(): AppMiddleware {
  return async (ctx, next) => {
    if (PARSED_METHODS.has(ctx.method)) ctx.state.bodyError = await readInto(ctx);
    await next();
  };
}

async function readInto(ctx: AppContext): Promise<Error | undefined> {
  ctx.request.body = {};
  const kind = ctx.is(JSON_TYPES) ? 'json' : ctx.is('urlencoded') ? 'form' : undefined;
  if (!kind) return undefined;
  const source = decodedBody(ctx.req);
  if (!source) return unparsable();
  const read = await readBody(source, BODY_LIMIT_BYTES);
  // Node discards the rest of a body too large to read once the answer is sent, and keeps the connection.
  if (read.outcome === 'too_large') {
    return new PayloadTooLarge(`The request body is larger than the ${BODY_LIMIT} limit.`, { param: 'body' });
  }
  if (read.outcome === 'aborted') return unparsable();
  ctx.request.rawBody = read.text;
  if (kind === 'form') {
    ctx.request.body = formFields(read.text);
    return undefined;
  }
  const text = read.text.trim();
  if (text === '') return undefined;
  // Strict, as before: a JSON body is an object or an array, and never names `__proto__` as a key.
  const parsed = text[0] === '{' || text[0] === '[' ? parseJson(text) : { ok: false as const };
  if (!parsed.ok || (MAY_NAME_PROTO.test(text) && namesProto(text))) return unparsable();
  ctx.request.body = parsed.value;
  return depthError(parsed.value);
}
