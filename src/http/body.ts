// Request bodies: JSON and forms up to 100 kB (413 beyond), and JSON nested at most 32 levels deep and holding at most
// 4,096 objects and arrays, checked without recursion so hostile nesting cannot exhaust the stack. MCP routes read
// their own bodies (JSON-RPC errors).
import { bodyParser } from '@koa/bodyparser';
import type { AppMiddleware } from './context.js';
import { BadRequest } from '../domain/errors.js';

export const BODY_LIMIT = '100kb';
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

/** Parses the body, recording (not throwing) why it could not be: the contract reports it after routing and auth. */
export function parseBodies(): AppMiddleware {
  const parse = bodyParser({
    enableTypes: ['json', 'form'],
    jsonLimit: BODY_LIMIT,
    formLimit: BODY_LIMIT,
    encoding: ENCODING,
  }) as unknown as AppMiddleware;
  return async (ctx, next) => {
    let parsed = false;
    try {
      await parse(ctx, async () => {
        parsed = true;
      });
    } catch (error) {
      ctx.state.bodyError = error;
    }
    // Only a parsed body is measured, so this never hides an error the parser recorded.
    if (parsed) ctx.state.bodyError = depthError(ctx.request.body);
    await next();
  };
}
