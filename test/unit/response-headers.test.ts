// The request's flat header list (src/http/response-headers.ts): a name set again replaces the earlier header in place,
// whatever its case, as Node's setHeader does; names that only share a length or a first letter stay apart; Koa's
// response reads and writes it, and an answer Koa would write is written with it, without Node's header map.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServer, request, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { keepHeadersInList, ResponseHeaders } from '../../src/http/response-headers.js';

/** A response that records what the list writes to it. */
function recordingResponse() {
  const written: { status?: number; headers?: string[]; set: Array<[string, string]> } = { set: [] };
  const res = {
    headersSent: false,
    setHeader: (name: string, value: string) => written.set.push([name, value]),
    hasHeader: (name: string) => written.set.some(([set]) => set.toLowerCase() === name.toLowerCase()),
    writeHead: (status: number, headers: string[]) => {
      written.status = status;
      written.headers = [...headers];
    },
    end: () => undefined,
  } as unknown as ServerResponse;
  return { res, written };
}

function answered(list: ResponseHeaders, written: ReturnType<typeof recordingResponse>['written']): string[] {
  list.answer(200, Buffer.from('{}'));
  list.finish({ method: 'GET', writable: true, status: 200, body: undefined });
  return written.headers!;
}

describe('the flat header list', () => {
  it('replaces a header set again under another case, in its place', () => {
    const { res, written } = recordingResponse();
    const list = new ResponseHeaders(res, ['X-Request-Id', 'a', 'Cache-Control', 'no-store', 'Vary', 'Origin']);
    list.set('cache-control', 'public, max-age=60');
    list.set('VARY', 'Origin, Accept');
    expect(answered(list, written)).toEqual([
      'X-Request-Id',
      'a',
      'cache-control',
      'public, max-age=60',
      'VARY',
      'Origin, Accept',
    ]);
  });

  it('keeps apart names of one length, or one first letter, that are not the same name', () => {
    const { res, written } = recordingResponse();
    const list = new ResponseHeaders(res, ['ETag', '"1"', 'Referrer-Policy', 'no-referrer']);
    list.set('Vary', 'Origin'); // the length of ETag
    list.set('RateLimit-Limit', '600'); // the length of Referrer-Policy, and its first letter
    list.set('Retry-After', '1'); // its first letter only
    expect(list.has('etag')).toBe(true);
    expect(list.has('ratelimit-limit')).toBe(true);
    expect(list.has('Age')).toBe(false);
    expect(answered(list, written)).toEqual([
      'ETag',
      '"1"',
      'Referrer-Policy',
      'no-referrer',
      'Vary',
      'Origin',
      'RateLimit-Limit',
      '600',
      'Retry-After',
      '1',
    ]);
  });

  it('sets every header on the response, in order, once flushed, and later ones directly', () => {
    const { res, written } = recordingResponse();
    const list = new ResponseHeaders(res, ['X-Request-Id', 'a', 'Cache-Control', 'no-store']);
    list.flush();
    list.set('Age', '3');
    expect(written.set).toEqual([
      ['X-Request-Id', 'a'],
      ['Cache-Control', 'no-store'],
      ['Age', '3'],
    ]);
    expect(list.pending).toBe(false);
  });
});

/** A Koa application that starts each request's list as the door does, then runs `handle`. */
async function serving(handle: Koa.Middleware): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  keepHeadersInList(app);
  app.use((ctx, next) => {
    const headers = new ResponseHeaders(ctx.res, ['X-Request-Id', 'req_1', 'Cache-Control', 'no-store']);
    ctx.state.headers = headers;
    return next().then(() => headers.finish(ctx));
  });
  app.use(handle);
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The response's headers as sent, in order, without those Node adds (Date, Connection, Keep-Alive). */
function sent(url: string, method = 'GET'): Promise<{ status: number; headers: string[][]; text: string }> {
  const added = new Set(['date', 'connection', 'keep-alive']);
  return new Promise((resolve, reject) => {
    request(url, { method }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const raw = response.rawHeaders;
        const headers: string[][] = [];
        for (let i = 0; i < raw.length; i += 2) headers.push([raw[i]!.toLowerCase(), raw[i + 1]!]);
        resolve({
          status: response.statusCode!,
          headers: headers.filter(([name]) => !added.has(name!)),
          text: Buffer.concat(chunks).toString(),
        });
      });
    })
      .on('error', reject)
      .end();
  });
}

describe("Koa's response on the list", () => {
  let server: Server | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it("writes a JSON answer with Koa's headers in the list, and none through Node's header map", async () => {
    let seen: unknown[] = [];
    const serve = await serving((ctx) => {
      ctx.set('Cache-Control', 'public, max-age=60'); // replaces the list's, in its place
      ctx.set('ETag', '"1"');
      ctx.remove('X-Request-Id');
      seen = [
        ctx.response.get('cache-control'),
        (ctx.response as unknown as { has(name: string): boolean }).has('ETAG'),
        ctx.response.get('X-Request-Id'),
      ];
      ctx.body = { name: 'Zungenschaber é' };
      ctx.status = 201;
    });
    server = serve.server;
    const setHeader = vi.spyOn(ServerResponse.prototype, 'setHeader');
    const answer = await sent(serve.url);
    expect(setHeader).not.toHaveBeenCalled();
    expect(seen).toEqual(['public, max-age=60', true, undefined]);
    expect(answer.status).toBe(201);
    expect(answer.text).toBe('{"name":"Zungenschaber é"}');
    expect(answer.headers).toEqual([
      ['cache-control', 'public, max-age=60'],
      ['etag', '"1"'],
      ['content-type', 'application/json; charset=utf-8'],
      ['content-length', String(Buffer.byteLength(answer.text))],
    ]);
  });

  it('extends Vary in the list as Koa does, without the map', async () => {
    const serve = await serving((ctx) => {
      ctx.set('Vary', 'Origin');
      ctx.vary('Accept-Encoding');
      ctx.vary('origin');
      ctx.body = { ok: true };
    });
    server = serve.server;
    const setHeader = vi.spyOn(ServerResponse.prototype, 'setHeader');
    const answer = await sent(serve.url);
    expect(setHeader).not.toHaveBeenCalled();
    expect(answer.headers).toContainEqual(['vary', 'Origin, Accept-Encoding']);
  });

  it('sets the list on the response for what needs the map (several values), and Koa writes the rest', async () => {
    const serve = await serving((ctx) => {
      ctx.set('Vary', 'Origin');
      ctx.vary('Accept-Encoding');
      ctx.set('Link', ['</a>; rel="next"', '</b>; rel="prev"']);
      ctx.append('Link', '</c>; rel="last"');
      ctx.body = 'plain';
    });
    server = serve.server;
    const setHeader = vi.spyOn(ServerResponse.prototype, 'setHeader');
    const answer = await sent(serve.url);
    expect(setHeader).toHaveBeenCalled();
    expect(answer.text).toBe('plain');
    expect(answer.headers).toEqual([
      ['x-request-id', 'req_1'],
      ['cache-control', 'no-store'],
      ['vary', 'Origin, Accept-Encoding'],
      ['link', '</a>; rel="next"'],
      ['link', '</b>; rel="prev"'],
      ['link', '</c>; rel="last"'],
      ['content-type', 'text/plain; charset=utf-8'],
      ['content-length', '5'],
    ]);
    const head = await sent(serve.url, 'HEAD');
    expect(head.headers).toContainEqual(['content-length', '5']);
  });

  it('refuses a header value Node would refuse when it is set, not when the answer is written', async () => {
    let refused: unknown;
    const serve = await serving((ctx) => {
      try {
        ctx.set('X-Echo', 'a\r\nSet-Cookie: b');
      } catch (error) {
        refused = error;
      }
      ctx.body = { ok: true };
    });
    server = serve.server;
    const answer = await sent(serve.url);
    expect((refused as { code?: string }).code).toBe('ERR_INVALID_CHAR');
    expect(answer.status).toBe(200);
    expect(answer.headers.map(([name]) => name)).not.toContain('x-echo');
  });
});
