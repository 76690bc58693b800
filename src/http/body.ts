// Request bodies: JSON and forms up to 100 kB (413 beyond), and JSON nested at most 32 levels deep, checked without
// recursion so hostile nesting cannot exhaust the stack. MCP routes read their own bodies (JSON-RPC errors).
import { bodyParser } from '@koa/bodyparser';
import type { AppMiddleware } from './context.js';
import { BadRequest } from '../domain/errors.js';

export const BODY_LIMIT = '100kb';
const MAX_DEPTH = 32;

export function exceedsDepth(value: unknown, maxDepth = MAX_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Parses the body, recording (not throwing) why it could not be: the contract reports it after routing and auth. */
export function parseBodies(): AppMiddleware {
  const parse = bodyParser({
    enableTypes: ['json', 'form'],
    jsonLimit: BODY_LIMIT,
    formLimit: BODY_LIMIT,
    encoding: 'utf-8',
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
    if (parsed && exceedsDepth(ctx.request.body))
      ctx.state.bodyError = new BadRequest('invalid_body', `The body is nested deeper than ${MAX_DEPTH} levels.`, {
        param: 'body',
      });
    await next();
  };
}
