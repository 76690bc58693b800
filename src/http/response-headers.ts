// A response's headers as one flat list, from the door to the write. The door (src/http/server.ts) starts the list;
// every step and handler then sets, reads and removes headers in it, directly (`ctx.state.headers`) or through Koa's
// response (`ctx.set`, `ctx.type`, `ctx.body = …`), whose header methods `keepHeadersInList` points at the list while
// it is one. The door's last word writes a JSON, text or bytes answer itself, as Koa would, with one
// `writeHead(status, list)` and `end(bytes)`: Node then stores the list as given, without its header map, a
// `setHeader` per header or Koa's setters. Only what needs Node's own map (Koa's whole-map getters, a header with
// several values) or a body Koa streams sets the list on the response first (`flush`); Koa then writes the response
// as it always does.
import { validateHeaderName, validateHeaderValue, type ServerResponse } from 'node:http';
import type Koa from 'koa';
import vary from 'vary';

/** An answer made of the list's headers and these bytes (none for a 304). */
interface FlatAnswer {
  status: number;
  body: Buffer | undefined;
}

/** What the door's last word reads and writes of Koa's context. */
interface Finishing {
  readonly method: string;
  readonly writable: boolean;
  readonly status: number;
  readonly body: unknown;
  respond?: boolean;
}

/** Statuses whose responses carry no body (Koa's `statuses.empty`): Koa writes them. */
const BODILESS = new Set([204, 205, 304]);

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

/** A body Koa writes as JSON: a plain object or an array (anything else, a stream say, is Koa's to write). */
function isJson(body: unknown): body is object {
  if (typeof body !== 'object' || body === null) return false;
  if (Array.isArray(body)) return true;
  const prototype: unknown = Object.getPrototypeOf(body);
  return prototype === Object.prototype || prototype === null;
}

export class ResponseHeaders {
  /** Names and values, alternating: the response's headers until flushed, and what was written once written. */
  #list: string[];
  /** Set on the response (Node's header map): reads and writes go to the response. */
  #flushed = false;
  /** Written by the door with `writeHead`: reads still answer from the list. */
  #written = false;
  #answer: FlatAnswer | undefined;

  constructor(
    private readonly res: ServerResponse,
    initial: string[],
  ) {
    this.#list = initial;
  }

  /** Whether the headers were set on the response (Node's header map holds them, as Koa would have it). */
  get flushed(): boolean {
    return this.#flushed;
  }

  /** Whether the headers are still a list that can change (neither flushed nor written). */
  get pending(): boolean {
    return !this.#flushed && !this.#written;
  }

  #indexOf(name: string): number {
    const list = this.#list;
    for (let i = 0; i < list.length; i += 2) if (sameName(list[i]!, name)) return i;
    return -1;
  }

  /** Sets a header (replacing one of the same name in place, as `setHeader` does) in the list, or on the response. */
  set(name: string, value: string): void {
    if (!this.pending) {
      if (!this.res.headersSent) this.res.setHeader(name, value);
      return;
    }
    const index = this.#indexOf(name);
    if (index === -1) this.#list.push(name, value);
    else {
      this.#list[index] = name;
      this.#list[index + 1] = value;
    }
  }

  /** A header's value, from the list while it holds the headers (pending or written), else from the response. */
  get(name: string): string | undefined {
    if (this.#flushed) {
      const value = this.res.getHeader(name);
      return value === undefined ? undefined : String(value);
    }
    const index = this.#indexOf(name);
    return index === -1 ? undefined : this.#list[index + 1];
  }

  /** Whether the response has a header of this name. */
  has(name: string): boolean {
    if (this.#flushed) return this.res.hasHeader(name);
    return this.#indexOf(name) !== -1;
  }

  /** Removes a header, from the list while it is pending. */
  remove(name: string): void {
    if (!this.pending) {
      if (!this.res.headersSent) this.res.removeHeader(name);
      return;
    }
    const index = this.#indexOf(name);
    if (index !== -1) this.#list.splice(index, 2);
  }

  /** Adds fields to Vary (each once, whatever its case; `*` stays alone), as Koa's `vary` does on the response. */
  vary(field: string | string[]): void {
    if (!this.pending) {
      if (!this.res.headersSent) vary(this.res, field);
      return;
    }
    this.set('Vary', vary.append(this.get('Vary') ?? '', field));
  }

  /** Sets the list's headers on the response, in order, for Koa and every later step. */
  flush(): void {
    if (!this.pending) return;
    this.#flushed = true;
    this.#answer = undefined;
    const list = this.#list;
    for (let i = 0; i < list.length; i += 2) this.res.setHeader(list[i]!, list[i + 1]!);
  }

  /** Answers with the list and these bytes (Content-Type and Content-Length are the caller's to list), while pending. */
  answer(status: number, body?: Buffer): void {
    if (!this.pending) throw new Error('a flat answer after the headers were flushed');
    this.#answer = { status, body };
  }

  #write(ctx: Finishing, status: number, body: string | Buffer | undefined): void {
    this.#written = true;
    ctx.respond = false;
    this.res.writeHead(status, this.#list);
    this.res.end(ctx.method === 'HEAD' ? undefined : body);
  }

  /**
   * The door's last word, once the route's pipeline has answered: a flat answer, or a JSON, text or bytes body as Koa
   * would write it (Content-Length from the bytes; `ctx.respond` false), is written here with the list. Anything else
   * (HEAD, a bodiless status, a stream, no body, a context no longer writable) is left to Koa, with the list flushed.
   */
  finish(ctx: Finishing): void {
    if (!this.pending) return;
    const answer = this.#answer;
    if (answer) {
      if (!ctx.writable) {
        this.#written = true;
        ctx.respond = false;
        this.res.statusCode = answer.status;
        return;
      }
      return this.#write(ctx, answer.status, answer.body);
    }
    const { status } = ctx;
    if (ctx.respond === false || !ctx.writable || ctx.method === 'HEAD' || BODILESS.has(status)) return this.flush();
    const { body } = ctx;
    const json = isJson(body);
    const bytes: string | Buffer | undefined =
      typeof body === 'string' || Buffer.isBuffer(body)
        ? body
        : json
          ? (JSON.stringify(body) as string | undefined)
          : undefined;
    if (bytes === undefined) return this.flush();
    // Koa lists the length of a string or bytes as they are set, and JSON's as it writes it; so is it here.
    if ((json || !this.has('Content-Length')) && !this.has('Transfer-Encoding')) {
      this.set('Content-Length', String(typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length));
    }
    this.#write(ctx, status, bytes);
  }
}

/** Koa's response methods that read and write headers (the prototype of every application's responses). */
interface KoaHeaderMethods {
  set(field: unknown, value?: unknown): void;
  get(field: string): unknown;
  has(field: string): boolean;
  remove(field: string): void;
  vary(field: string | string[]): void;
}

/** The headers list of the request a Koa response belongs to (none before the door made it). */
function listOf(response: Koa.Response): ResponseHeaders | undefined {
  return (response.ctx.state as { headers?: ResponseHeaders }).headers;
}

/**
 * Points the header methods of every Koa response of `app` at the request's list while it is one: `set` (one name,
 * one value; anything else flushes the list and is Koa's), `get`, `has`, `remove`, `vary`; the whole-map getters
 * flush it first. Koa's own setters (`type`, `length`, `body`, `etag`, `redirect`, …) go through these. A name or
 * value Node would refuse is refused here, when it is set, as `setHeader` would.
 */
export function keepHeadersInList(app: Koa): void {
  const koa = Object.getPrototypeOf(app.response) as KoaHeaderMethods;
  const response = app.response as Koa.Response;
  const header = Object.getOwnPropertyDescriptor(koa, 'header')!.get!;
  const headers = Object.getOwnPropertyDescriptor(koa, 'headers')!.get!;
  Object.defineProperties(response, {
    set: {
      value(this: Koa.Response, field: unknown, value: unknown) {
        const list = listOf(this);
        if (
          list?.pending &&
          typeof field === 'string' &&
          field &&
          (typeof value === 'string' || typeof value === 'number')
        ) {
          const text = String(value);
          validateHeaderName(field);
          validateHeaderValue(field, text);
          return list.set(field, text);
        }
        list?.flush();
        return koa.set.call(this, field, value);
      },
    },
    get: {
      value(this: Koa.Response, field: string) {
        const list = listOf(this);
        // Once flushed, Koa's own: a header of several values is its array, as `append` expects.
        return list && !list.flushed ? list.get(field) : koa.get.call(this, field);
      },
    },
    has: {
      value(this: Koa.Response, field: string) {
        const list = listOf(this);
        return list ? list.has(field) : koa.has.call(this, field);
      },
    },
    remove: {
      value(this: Koa.Response, field: string) {
        const list = listOf(this);
        return list ? list.remove(field) : koa.remove.call(this, field);
      },
    },
    vary: {
      value(this: Koa.Response, field: string | string[]) {
        const list = listOf(this);
        return list ? list.vary(field) : koa.vary.call(this, field);
      },
    },
    header: {
      get(this: Koa.Response) {
        listOf(this)?.flush();
        return header.call(this);
      },
    },
    headers: {
      get(this: Koa.Response) {
        listOf(this)?.flush();
        return headers.call(this);
      },
    },
  });
}
