// A response's headers as one flat list until a step needs Node's own header map. The door (src/http/server.ts) and
// the first steps of a route's pipeline (the CORS answer, the limiter, the read cache) only add headers, so they add
// them here; the rest of the pipeline, from the first step that may read, remove or append to headers through Koa, sees
// them set on the response, in the same order (src/http/routes.ts puts `flush` there). A read the cache answers
// before that is written by the door with one `writeHead(status, list)` and `end(bytes)`: Node then stores the list as
// given, without a header map, a `setHeader` per header or Koa's setters.
import type { ServerResponse } from 'node:http';

/** An answer made of the list's headers and these bytes (none for a 304). */
interface FlatAnswer {
  status: number;
  body: Buffer | undefined;
}

/** What the door's last word reads and writes of Koa's context. */
interface Finishing {
  readonly method: string;
  readonly writable: boolean;
  respond?: boolean;
}

/**
 * Whether two header names are one (header names are case-insensitive). Ours are spelled the same everywhere, so most
 * pairs are told apart by their length or first letter: lower-casing both for every pair a list of 17 headers compares
 * was a measurable part of a cached read.
 */
function sameName(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length !== b.length || (a.charCodeAt(0) | 0x20) !== (b.charCodeAt(0) | 0x20)) return false;
  return a.toLowerCase() === b.toLowerCase();
}

export class ResponseHeaders {
  /** Names and values, alternating, until flushed to the response; undefined after. */
  #pending: string[] | undefined;
  #answer: FlatAnswer | undefined;

  constructor(
    private readonly res: ServerResponse,
    initial: string[],
  ) {
    this.#pending = initial;
  }

  /** Sets a header (replacing one of the same name in place, as `setHeader` does) in the list, or on the response. */
  set(name: string, value: string): void {
    const pending = this.#pending;
    if (!pending) {
      if (!this.res.headersSent) this.res.setHeader(name, value);
      return;
    }
    for (let i = 0; i < pending.length; i += 2) {
      if (sameName(pending[i]!, name)) {
        pending[i] = name;
        pending[i + 1] = value;
        return;
      }
    }
    pending.push(name, value);
  }

  /** Whether the headers are still a list (no step past the first ones has run). */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /** Whether the list holds a header of this name. */
  has(name: string): boolean {
    const pending = this.#pending;
    if (!pending) return this.res.hasHeader(name);
    for (let i = 0; i < pending.length; i += 2) if (sameName(pending[i]!, name)) return true;
    return false;
  }

  /** Sets the list's headers on the response, in order, for Koa and every later step. */
  flush(): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    this.#answer = undefined;
    for (let i = 0; i < pending.length; i += 2) this.res.setHeader(pending[i]!, pending[i + 1]!);
  }

  /** Answers with the list and these bytes (Content-Type and Content-Length are the caller's to list), while pending. */
  answer(status: number, body?: Buffer): void {
    if (!this.#pending) throw new Error('a flat answer after the headers were flushed');
    this.#answer = { status, body };
  }

  /**
   * The door's last word: a flat answer is written here (`ctx.respond` false, as Koa would write it: no body for HEAD
   * or a 304), and anything else is left to Koa with the list flushed.
   */
  finish(ctx: Finishing): void {
    const answer = this.#answer;
    const pending = this.#pending;
    if (!answer || !pending) return this.flush();
    this.#pending = undefined;
    ctx.respond = false;
    const { res } = this;
    if (!ctx.writable) {
      res.statusCode = answer.status;
      return;
    }
    res.writeHead(answer.status, pending);
    res.end(ctx.method === 'HEAD' ? undefined : answer.body);
  }
}

/** Marks a step that only adds headers through `ctx.state.headers` (and reads none), so the list may stay flat. */
const FLAT = Symbol('writes headers flat');
/** Marks a flat step that may answer from the list (`answer`), which it can only do while the list is flat. */
const ANSWERS = Symbol('answers from the flat list');

export function writesFlat<Step extends object>(step: Step): Step {
  return Object.assign(step, { [FLAT]: true });
}

export function answersFlat<Step extends object>(step: Step): Step {
  return Object.assign(writesFlat(step), { [ANSWERS]: true });
}

export function isFlat(step: object): boolean {
  return (step as { [FLAT]?: boolean })[FLAT] === true;
}

function answersFromList(step: object): boolean {
  return (step as { [ANSWERS]?: boolean })[ANSWERS] === true;
}

/** Sets the list on the response: compiled into each pipeline before its first step that is not `writesFlat`. */
function flushHeaders(ctx: { state: { headers: ResponseHeaders } }, next: () => Promise<void>): Promise<void> {
  ctx.state.headers.flush();
  return next();
}

/**
 * A route's steps (its error rendering first) with the flush placed before the first later step that is not
 * `writesFlat`. A step that answers from the list (`answersFlat`) placed after that could never answer: the route is
 * refused at start.
 */
export function withFlush<Step extends object>(steps: Step[], route: string): Step[] {
  let flat = 1;
  while (flat < steps.length && isFlat(steps[flat]!)) flat++;
  if (steps.slice(flat).some(answersFromList)) {
    throw new Error(`${route}: a step that answers from the header list comes after a step that is not flat`);
  }
  return [...steps.slice(0, flat), flushHeaders as unknown as Step, ...steps.slice(flat)];
}
